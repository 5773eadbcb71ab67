import Foundation
import FuzzSupport
import NIOSSL
@_spi(Fuzzing) import TetherSockets

/// Input: entries of a key byte (one of the ten known keys, or a random key whose bytes follow), a type byte and
/// the value's bytes.
@main
enum FuzzTLSDictionary {
    static func main() {
        runFuzzer(fuzzTLSDictionary)
    }
}

/// The keys `startTLS` reads, in the order it checks them.
let knownKeys = [
    kCFStreamSSLIsServer, kCFStreamSSLLevel, kCFStreamSSLPeerName, kCFStreamSSLValidatesCertificateChain,
    kCFStreamSSLAllowsAnyRoot, kCFStreamSSLAllowsExpiredCertificates, kCFStreamSSLAllowsExpiredRoots,
    kTetherStreamSSLTrustRoots, kCFStreamSSLCertificates, kTetherStreamSSLPrivateKey,
]
let levels = [
    kCFStreamSocketSecurityLevelNone, kCFStreamSocketSecurityLevelSSLv3, kCFStreamSocketSecurityLevelTLSv1,
    kCFStreamSocketSecurityLevelNegotiatedSSL,
]

/// A self-signed P-256 certificate for fuzz.example and its key, made for the fuzzer (`Certificate.swift`).
let certificate = try! NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)
let privateKey = try! NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)

func fuzzTLSDictionary(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var dictionary: [String: Any] = [:]
    var entries = 0
    while !input.isAtEnd, entries < 32 {
        entries += 1
        let keyByte = input.byte()
        let key = Int(keyByte) % 16 < knownKeys.count ? knownKeys[Int(keyByte) % 16] : input.string()
        dictionary[key] = value(&input)
    }

    let result = translate(dictionary)
    require(translate(dictionary) == result, "translating twice differs")
    // Unknown keys are ignored.
    let known = dictionary.filter { knownKeys.contains($0.key) }
    require(translate(known) == result, "an unknown key changed the translation")
    check(result, dictionary)
    return 0
}

private func translate(
    _ dictionary: [String: Any]
) -> Result<TLSDictionaryParsing.Translation, TLSDictionaryParsing.Refusal> {
    Result { () throws(TLSDictionaryParsing.Refusal) in try TLSDictionaryParsing.translate(dictionary) }
}

/// A value of a type drawn from the input.
private func value(_ input: inout FuzzInput) -> Any {
    let kind = input.byte()
    let byte = input.byte()
    switch kind % 16 {
    case 0: return byte & 1 == 1
    case 1: return Int(Int8(bitPattern: byte))
    case 2: return NSNumber(value: Int(Int8(bitPattern: byte)))
    case 3: return Double(Int8(bitPattern: byte)) / 4
    case 4: return levels[Int(byte) % levels.count]
    case 5: return input.string()
    case 6: return NSNull()
    case 7: return [NIOSSLCertificate]()
    case 8: return [NIOSSLCertificate](repeating: certificate, count: Int(byte % 3) + 1)
    case 9: return privateKey
    case 10: return certificate
    case 11: return Data([byte])
    case 12: return [String(byte)]
    case 13: return [byte & 1 == 1]
    case 14: return NSString(string: input.string())
    default: return NSNumber(value: byte & 1 == 1)
    }
}

/// The model of `startTLS`'s reading of a flag: a Bool, or a number (non-zero is true); nil for any other type.
private func flag(_ value: Any) -> Bool? {
    switch value {
    case let flag as Bool: flag
    case let number as Int: number != 0
    case let number as NSNumber: number.boolValue
    default: nil
    }
}

private func check(
    _ result: Result<TLSDictionaryParsing.Translation, TLSDictionaryParsing.Refusal>,
    _ dictionary: [String: Any]
) {
    // The first known key (in the order `startTLS` reads them) whose value it cannot take is the one refused.
    let flagKeys: Set = [
        kCFStreamSSLIsServer, kCFStreamSSLValidatesCertificateChain, kCFStreamSSLAllowsAnyRoot,
        kCFStreamSSLAllowsExpiredCertificates, kCFStreamSSLAllowsExpiredRoots,
    ]
    let firstBad = knownKeys.first { key in
        guard let value = dictionary[key] else { return false }
        if value is Double { return false }  // a Double's Bool reading is Foundation's business
        if flagKeys.contains(key) { return flag(value) == nil }
        switch key {
        case kCFStreamSSLLevel:
            guard let level = value as? String else { return true }
            return level != kCFStreamSocketSecurityLevelTLSv1 && level != kCFStreamSocketSecurityLevelNegotiatedSSL
        case kCFStreamSSLPeerName: return !(value is NSNull || value is String)
        case kTetherStreamSSLTrustRoots, kCFStreamSSLCertificates: return !(value is [NIOSSLCertificate])
        default: return !(value is NIOSSLPrivateKey)
        }
    }
    let translation: TLSDictionaryParsing.Translation
    switch result {
    case .failure(let refusal):
        require(knownKeys.contains(refusal.key), "refused unknown key \(refusal.key)")
        require(dictionary[refusal.key] != nil, "refused absent key \(refusal.key)")
        if !dictionary.values.contains(where: { $0 is Double }) {
            require(refusal.key == firstBad, "refused \(refusal.key), expected \(firstBad ?? "nothing")")
        }
        return
    case .success(let value):
        require(firstBad == nil, "accepted a bad \(firstBad ?? "")")
        translation = value
    }
    if dictionary.values.contains(where: { $0 is Double }) { return }
    let settings = translation.settings
    let isServer = dictionary[kCFStreamSSLIsServer].flatMap(flag) ?? false
    require(settings.isServer == isServer, "isServer differs")
    require((translation.evaluation == nil) == isServer, "a client without evaluation, or a server with one")
    require(settings.manuallyEvaluatesTrust == !isServer, "manuallyEvaluatesTrust differs")
    let tlsv1 = dictionary[kCFStreamSSLLevel] as? String == kCFStreamSocketSecurityLevelTLSv1
    require(settings.minimumTLSVersion == (tlsv1 ? .tlsv1 : .tlsv12), "minimum TLS version differs")
    let peerName = dictionary[kCFStreamSSLPeerName] as? String
    require(settings.peerName == peerName && settings.verifiesPeerName == (peerName != nil), "peer name differs")
    require(
        settings.certificateChain == (dictionary[kCFStreamSSLCertificates] as? [NIOSSLCertificate] ?? []),
        "certificate chain differs"
    )
    require(
        settings.privateKey == dictionary[kTetherStreamSSLPrivateKey] as? NIOSSLPrivateKey,
        "private key differs"
    )
    if let evaluation = translation.evaluation {
        let verifies =
            (dictionary[kCFStreamSSLValidatesCertificateChain].flatMap(flag) ?? true)
            && !(dictionary[kCFStreamSSLAllowsAnyRoot].flatMap(flag) ?? false)
        let expired = [kCFStreamSSLAllowsExpiredCertificates, kCFStreamSSLAllowsExpiredRoots].contains {
            dictionary[$0].flatMap(flag) ?? false
        }
        require(evaluation.verifiesChain == verifies, "chain verification differs")
        require(evaluation.allowsExpired == expired, "allowsExpired differs")
        require(evaluation.peerName == peerName, "evaluated peer name differs")
        require(
            evaluation.roots == dictionary[kTetherStreamSSLTrustRoots] as? [NIOSSLCertificate],
            "trust roots differ"
        )
    }
}
