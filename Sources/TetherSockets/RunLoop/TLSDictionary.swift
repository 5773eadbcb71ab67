import Foundation
import NIOCore
import NIOSSL

/// The RunLoop era's `startTLS` dictionary, translated into ``TLSSettings`` (the article "From AsyncSocket (RunLoop)"
/// lists its keys).
struct TLSDictionary {
    /// A known key whose value has the wrong type, or a level Tether does not offer.
    struct BadValue: Error, Sendable, CustomStringConvertible {
        var key: String
        var problem: String
        var description: String { "startTLS: \(key) \(problem)" }
    }

    /// The settings the engine applies.
    var settings: TLSSettings
    /// How the face evaluates the server's certificates (a client's: the engine asks it about every chain).
    var evaluator: RunLoopTrustEvaluator?

    /// Translates `dictionary`; unknown keys are ignored, as the original did.
    init(_ dictionary: [String: Any]) throws {
        var settings = TLSSettings(isServer: false, peerName: nil, verifiesPeerName: false)
        if let value = dictionary[kCFStreamSSLIsServer] {
            settings.isServer = try Self.bool(value, key: kCFStreamSSLIsServer)
        }
        if let value = dictionary[kCFStreamSSLLevel] {
            guard let level = value as? String else {
                throw BadValue(key: kCFStreamSSLLevel, problem: "must be a String (a kCFStreamSocketSecurityLevel…)")
            }
            switch level {
            case kCFStreamSocketSecurityLevelNegotiatedSSL: break
            case kCFStreamSocketSecurityLevelTLSv1: settings.minimumTLSVersion = .tlsv1
            default: throw BadValue(key: kCFStreamSSLLevel, problem: "\(level) is not offered (SSL is obsolete)")
            }
        }
        if let value = dictionary[kCFStreamSSLPeerName] {
            if value is NSNull {
                settings.verifiesPeerName = false
            } else if let name = value as? String {
                settings.peerName = name
                settings.verifiesPeerName = true
            } else {
                throw BadValue(key: kCFStreamSSLPeerName, problem: "must be a String or NSNull")
            }
        }
        var verifiesChain = true
        if let value = dictionary[kCFStreamSSLValidatesCertificateChain] {
            verifiesChain = try Self.bool(value, key: kCFStreamSSLValidatesCertificateChain)
        }
        if let value = dictionary[kCFStreamSSLAllowsAnyRoot], try Self.bool(value, key: kCFStreamSSLAllowsAnyRoot) {
            verifiesChain = false
        }
        var allowsExpired = false
        for key in [kCFStreamSSLAllowsExpiredCertificates, kCFStreamSSLAllowsExpiredRoots] {
            if let value = dictionary[key], try Self.bool(value, key: key) { allowsExpired = true }
        }
        var roots: [NIOSSLCertificate]?
        if let value = dictionary[kTetherStreamSSLTrustRoots] {
            guard let list = value as? [NIOSSLCertificate] else {
                throw BadValue(key: kTetherStreamSSLTrustRoots, problem: "must be an array of NIOSSLCertificate")
            }
            roots = list
        }
        if let value = dictionary[kCFStreamSSLCertificates] {
            guard let chain = value as? [NIOSSLCertificate] else {
                throw BadValue(key: kCFStreamSSLCertificates, problem: "must be an array of NIOSSLCertificate")
            }
            settings.certificateChain = chain
        }
        if let value = dictionary[kTetherStreamSSLPrivateKey] {
            guard let key = value as? NIOSSLPrivateKey else {
                throw BadValue(key: kTetherStreamSSLPrivateKey, problem: "must be a NIOSSLPrivateKey")
            }
            settings.privateKey = key
        }
        if !settings.isServer {
            // The face evaluates the server's chain itself, as SecureTransport did for the original: the reason
            // of a refusal becomes its SecureTransport code.
            settings.manuallyEvaluatesTrust = true
            evaluator = RunLoopTrustEvaluator(
                roots: roots,
                verifiesChain: verifiesChain,
                allowsExpired: allowsExpired,
                peerName: settings.verifiesPeerName ? settings.peerName : nil
            )
        }
        self.settings = settings
    }

    private static func bool(_ value: Any, key: String) throws -> Bool {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber { return number.boolValue }
        throw BadValue(key: key, problem: "must be a Bool")
    }

    /// Whether `certificate` names `host` in its subject alternative names (DNS names with a leftmost wildcard, or
    /// IP addresses).
    static func certificate(_ certificate: NIOSSLCertificate, names host: String) -> Bool {
        let wanted = host.lowercased()
        let address = numericAddress(host)
        for name in certificate._subjectAlternativeNames() {
            let bytes = name.contents.withUnsafeBufferPointer { Array($0) }
            switch name.nameType {
            case .dnsName:
                let dns = String(decoding: bytes, as: UTF8.self).lowercased()
                if dns == wanted { return true }
                if dns.hasPrefix("*."), let dot = wanted.firstIndex(of: "."),
                    wanted[wanted.index(after: dot)...] == dns.dropFirst(2)
                {
                    return true
                }
            case .ipAddress:
                if let address, address == numericAddress(bytes: bytes) { return true }
            default:
                continue
            }
        }
        return false
    }

    /// The canonical text of a numeric IPv4 or IPv6 address, nil for a name.
    private static func numericAddress(_ host: String) -> String? {
        (try? SocketAddress(ipAddress: host, port: 0))?.ipAddress
    }

    /// The canonical text of a certificate's IP address entry (4 or 16 bytes).
    private static func numericAddress(bytes: [UInt8]) -> String? {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        return (try? SocketAddress(packedIPAddress: ByteBuffer(bytes: bytes), port: 0))?.ipAddress
    }
}
