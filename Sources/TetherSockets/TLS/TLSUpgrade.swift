import Crypto
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// One requested TLS upgrade of a connection: the settings, what the connection knows about its peer, and who waits.
/// Built by a face, carried by the engine until both queues reach its marker.
final class TLSUpgrade {
    let settings: TLSSettings
    /// The name given to connect when it was a name (not an IP literal); nil for accepted connections.
    let connectHost: String?
    /// Fails the handshake with `timeoutError` after this long (the async face's connect timeout, a listener's
    /// handshake limit); nil = no limit (the original's `startTLS`).
    let timeout: TimeAmount?
    let timeoutError: GCDAsyncSocketError
    /// Completed when the connection is secure, failed with the error that closed it.
    let promise: EventLoopPromise<Void>?

    init(
        settings: TLSSettings,
        connectHost: String?,
        timeout: TimeAmount? = nil,
        timeoutError: GCDAsyncSocketError = .connectTimeout,
        promise: EventLoopPromise<Void>?
    ) {
        self.settings = settings
        self.connectHost = connectHost.flatMap { HostResolver.isIPLiteral($0) ? nil : $0 }
        self.timeout = timeout
        self.timeoutError = timeoutError
        self.promise = promise
    }

    /// The name verification checks (client side): the configured peer name, else the name connected to.
    var peerName: String? {
        settings.isServer ? nil : settings.peerName ?? connectHost
    }

    /// Built-in verification of the peer name happens when there is a name and it is not switched off.
    private var checksName: Bool {
        !settings.isServer && !settings.manuallyEvaluatesTrust && settings.verifiesPeerName && peerName != nil
    }

    var verification: CertificateVerification {
        if settings.isServer {
            switch settings.clientCertificateVerification {
            case .none: return .none
            case .optional: return .optionalVerification
            case .required: return .noHostnameVerification
            }
        }
        if settings.skipsVerification { return .none }
        return checksName ? .fullVerification : .noHostnameVerification
    }

    /// The context for this upgrade: cached, or built on NIO's thread pool (never on the loop).
    func context(on loop: any EventLoop) -> EventLoopFuture<NIOSSLContext> {
        TLSContextCache.context(settings: settings, verification: verification, on: loop)
    }

    /// The handler for this connection. `askTrust` is called on the event loop when the settings ask for manual
    /// evaluation; it must complete the promise (from any thread).
    func makeHandler(
        context: NIOSSLContext,
        askTrust: @escaping ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResult>) -> Void
    ) throws -> NIOSSLHandler {
        if settings.isServer {
            if settings.manuallyEvaluatesTrust && settings.clientCertificateVerification != .none {
                return NIOSSLServerHandler(context: context, customVerificationCallback: askTrust)
            }
            return NIOSSLServerHandler(context: context)
        }
        // SNI and NIOSSL's name check take names only; for an IP literal NIOSSL checks the address connected to.
        let sniName = peerName.flatMap { HostResolver.isIPLiteral($0) ? nil : $0 }
        if settings.manuallyEvaluatesTrust {
            return try NIOSSLClientHandler(
                context: context,
                serverHostname: sniName,
                customVerificationCallback: askTrust
            )
        }
        return try NIOSSLClientHandler(context: context, serverHostname: sniName)
    }

    /// Pinning: nil when the leaf's SPKI hash is pinned (or nothing is pinned), else the error to close with.
    func pinningFailure(leaf: NIOSSLCertificate?) -> GCDAsyncSocketError? {
        let pins = settings.pinnedPublicKeyHashes
        guard !pins.isEmpty, !settings.manuallyEvaluatesTrust, !settings.skipsVerification else { return nil }
        guard let leaf, let spki = try? leaf.extractPublicKey().toSPKIBytes() else {
            return .tls("The peer presented no certificate to check the pinned public keys against", underlying: nil)
        }
        let hash = Array(SHA256.hash(data: spki))
        if pins.contains(hash) { return nil }
        return .tls("The peer's public key is not pinned", underlying: nil)
    }
}

@available(*, unavailable)
extension TLSUpgrade: Sendable {}

extension GCDAsyncSocketError {
    /// A TLS failure: code `.other`, domain `.tls`.
    static func tls(_ message: String, underlying: (any Error)?) -> GCDAsyncSocketError {
        GCDAsyncSocketError(code: .other, domain: .tls, message: message, underlying: underlying)
    }

    static var peerCertificateRejected: GCDAsyncSocketError {
        .tls("Peer certificate rejected", underlying: nil)
    }
}
