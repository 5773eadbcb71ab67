import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The RunLoop face's certificate evaluation, in the manner of the SecureTransport trust evaluation that the
/// original's `kCFStreamSSL…` keys configured: the chain against the trust roots (unless any root is allowed), its
/// validity dates (unless expiry is allowed), the peer name when one was given. It says *why* a chain is refused, as
/// the SecureTransport code the original reported.
struct RunLoopTrustEvaluator: Sendable {
    /// nil: the system's roots.
    var roots: [NIOSSLCertificate]?
    var verifiesChain: Bool
    var allowsExpired: Bool
    /// The name the leaf must carry; nil: no name check (the original's default).
    var peerName: String?

    /// The verdict: nil when the chain is accepted, else the SecureTransport code of the refusal.
    func evaluate(_ presented: [NIOSSLCertificate]) async -> Int? {
        guard let chain = try? Self.certificates(presented), let leaf = chain.first else { return -9807 }
        if verifiesChain {
            let store: CertificateStore
            if let roots {
                guard let anchors = try? Self.certificates(roots) else { return -9807 }
                store = CertificateStore(anchors)
            } else {
                store = CertificateStore.systemTrustRoots
            }
            var verifier = Verifier(rootCertificates: store) { IssuerChainPolicy() }
            guard
                case .validCertificate(let validated) = await verifier.validate(
                    leaf: leaf,
                    intermediates: CertificateStore(chain.dropFirst())
                )
            else { return -9812 }
            if !allowsExpired {
                let now = Date()
                if validated.contains(where: { $0.notValidAfter < now }) { return -9814 }
                if validated.contains(where: { $0.notValidBefore > now }) { return -9815 }
            }
        }
        if let peerName, !TLSDictionary.certificate(presented[0], names: peerName) { return -9843 }
        return nil
    }

    private static func certificates(_ list: [NIOSSLCertificate]) throws -> [Certificate] {
        try list.map { try Certificate(derEncoded: $0.toDERBytes()) }
    }
}
