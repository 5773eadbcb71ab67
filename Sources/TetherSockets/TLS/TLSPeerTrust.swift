import NIOCore
public import NIOSSL

/// The peer's certificates, handed to manual trust evaluation.
public struct TLSPeerTrust: Sendable {
    /// The certificates as the peer presented them, leaf first.
    public var peerCertificates: [NIOSSLCertificate]
    /// The name that built-in verification would have checked; nil on a server.
    public var peerName: String?

    /// Creates a trust object.
    public init(peerCertificates: [NIOSSLCertificate], peerName: String?) {
        self.peerCertificates = peerCertificates
        self.peerName = peerName
    }
}
