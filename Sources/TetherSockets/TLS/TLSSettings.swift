import NIOCore
public import NIOSSL

/// How a connection is secured: the role, whom to trust, what to present. Shared by both faces
/// (``GCDAsyncSocket/startTLS(_:)``, ``TCPConnection/connect(host:port:timeout:tls:proxy:on:logger:)``,
/// ``TCPListener/bind(host:port:tls:backlog:maxPendingConnections:on:logger:)``).
///
/// Secure by default: a client verifies the server's chain against ``trustRoots`` and, when it connected by host name
/// (or ``peerName`` is set), the name too. Connecting by IP literal verifies the chain and, only if ``peerName`` is set,
/// the name. Δ: the original verified the name only if `kCFStreamSSLPeerName` was set.
///
/// ```swift
/// let connection = try await TCPConnection.connect(host: "example.com", port: 443, tls: .client())
/// ```
public struct TLSSettings: Sendable, Hashable {
    /// Who verifies client certificates, on a server.
    public enum ClientCertificateVerification: Sendable, Hashable {
        /// No client certificate is asked for.
        case none
        /// A client certificate is asked for; if one is presented it must verify.
        case optional
        /// A client without a verifying certificate is refused.
        case required
    }

    /// Server role (true) or client role (false, default).
    public var isServer: Bool
    /// The name to verify and send as SNI; nil = the host name given to connect (none for IP literals).
    public var peerName: String?
    /// Whether the peer name is checked (default true). False keeps the chain check only.
    public var verifiesPeerName: Bool
    /// The identity: a server's certificate chain, or a client certificate; leaf first.
    public var certificateChain: [NIOSSLCertificate]
    /// The private key of ``certificateChain``.
    public var privateKey: NIOSSLPrivateKey?
    /// The roots peers' chains are verified against; the system store by default.
    public var trustRoots: NIOSSLTrustRoots
    /// Replaces every built-in check (chain, name, pins) by the delegate's answer
    /// (``GCDAsyncSocketDelegate/socket(_:didReceive:completionHandler:)``); delegate face only.
    public var manuallyEvaluatesTrust: Bool
    /// The oldest version accepted; TLS 1.2 by default.
    public var minimumTLSVersion: TLSVersion
    /// The newest version offered; nil = the library's newest (TLS 1.3).
    public var maximumTLSVersion: TLSVersion?
    /// ALPN protocols, most preferred first.
    public var applicationProtocols: [String]
    /// Whether a server asks for client certificates.
    public var clientCertificateVerification: ClientCertificateVerification
    /// TLS 1.2 cipher suites; nil = BoringSSL's list (TLS 1.3's suites are fixed).
    public var cipherSuites: [NIOTLSCipher]?
    /// SHA-256 hashes (32 bytes each) of accepted SubjectPublicKeyInfos: when not empty, the peer's leaf certificate
    /// must have one of them, on top of the chain and name checks.
    public var pinnedPublicKeyHashes: [[UInt8]]
    /// Package-internal, for `tether nc --insecure` only: a client that verifies nothing. Not public on purpose: an
    /// application that must accept a certificate it cannot verify uses manual trust or a pin.
    package var skipsVerification = false
    /// How long a closing connection waits for the peer's close_notify (NIOSSL's default); tests lengthen it.
    var shutdownTimeout = TimeAmount.seconds(5)

    /// Creates settings; every parameter has the secure default.
    public init(
        isServer: Bool = false,
        peerName: String? = nil,
        verifiesPeerName: Bool = true,
        certificateChain: [NIOSSLCertificate] = [],
        privateKey: NIOSSLPrivateKey? = nil,
        trustRoots: NIOSSLTrustRoots = .default,
        manuallyEvaluatesTrust: Bool = false,
        minimumTLSVersion: TLSVersion = .tlsv12,
        maximumTLSVersion: TLSVersion? = nil,
        applicationProtocols: [String] = [],
        clientCertificateVerification: ClientCertificateVerification = .none,
        cipherSuites: [NIOTLSCipher]? = nil,
        pinnedPublicKeyHashes: [[UInt8]] = []
    ) {
        self.isServer = isServer
        self.peerName = peerName
        self.verifiesPeerName = verifiesPeerName
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.trustRoots = trustRoots
        self.manuallyEvaluatesTrust = manuallyEvaluatesTrust
        self.minimumTLSVersion = minimumTLSVersion
        self.maximumTLSVersion = maximumTLSVersion
        self.applicationProtocols = applicationProtocols
        self.clientCertificateVerification = clientCertificateVerification
        self.cipherSuites = cipherSuites
        self.pinnedPublicKeyHashes = pinnedPublicKeyHashes
    }

    /// Client settings with full verification against the system roots.
    public static func client(peerName: String? = nil) -> TLSSettings {
        TLSSettings(peerName: peerName)
    }

    /// Server settings presenting `certificateChain` (leaf first) with `privateKey`.
    public static func server(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) -> TLSSettings {
        TLSSettings(isServer: true, certificateChain: certificateChain, privateKey: privateKey)
    }
}

extension TLSSettings {
    static func rank(_ version: TLSVersion) -> Int {
        switch version {
        case .tlsv1: 0
        case .tlsv11: 1
        case .tlsv12: 2
        case .tlsv13: 3
        }
    }

    /// Checks the settings for a role (`expectsServer` nil: either role).
    /// - Throws: ``GCDAsyncSocketError`` `.badConfig`.
    func validate(asyncFace: Bool, expectsServer: Bool?) throws {
        if let expectsServer, expectsServer != isServer {
            throw GCDAsyncSocketError.badConfig(
                expectsServer
                    ? "TLS settings for a listener must have isServer = true"
                    : "TLS settings for a connecting client must have isServer = false"
            )
        }
        if isServer && (certificateChain.isEmpty || privateKey == nil) {
            throw GCDAsyncSocketError.badConfig("A TLS server needs a certificate chain and its private key")
        }
        if !certificateChain.isEmpty && privateKey == nil {
            throw GCDAsyncSocketError.badConfig("A certificate chain needs its private key")
        }
        if let bad = pinnedPublicKeyHashes.first(where: { $0.count != 32 }) {
            throw GCDAsyncSocketError.badConfig("A pinned public key hash must be 32 bytes (SHA-256), not \(bad.count)")
        }
        if asyncFace && manuallyEvaluatesTrust {
            throw GCDAsyncSocketError.badConfig(
                "manuallyEvaluatesTrust needs a delegate to answer: use GCDAsyncSocket, or trustRoots and pins"
            )
        }
        if let maximum = maximumTLSVersion, Self.rank(maximum) < Self.rank(minimumTLSVersion) {
            throw GCDAsyncSocketError.badConfig("maximumTLSVersion is older than minimumTLSVersion")
        }
    }
}
