import Crypto
import NIOCore
import NIOPosix
import NIOSSL
import TetherConcurrency

/// `NIOSSLContext`s are costly to build (the system roots are parsed each time, milliseconds of CPU): they are built
/// on NIO's thread pool, never on an event loop, and connections with the same settings share one. The cache keeps
/// the most recently used `capacity` contexts (least recently used out first).
enum TLSContextCache {
    private struct Key: Hashable {
        var settings: TLSSettings
        var verification: CertificateVerification
    }

    /// How many contexts the cache keeps.
    static let capacity = 64
    private static let entries = LockedBox(LRUCache<Key, NIOSSLContext>(capacity: capacity))

    /// The context for `settings`: from the cache, or built on NIO's thread pool; the future completes on `loop`.
    static func context(
        settings: TLSSettings,
        verification: CertificateVerification,
        on loop: any EventLoop
    ) -> EventLoopFuture<NIOSSLContext> {
        let key = key(settings: settings, verification: verification)
        if let cached = entries.withLock({ $0.value(for: key) }) { return loop.makeSucceededFuture(cached) }
        return NIOThreadPool.singleton.runIfActive(eventLoop: loop) {
            let context = try makeContext(settings: settings, verification: verification)
            entries.withLock { $0.store(context, for: key) }
            return context
        }
    }

    /// Whether a context for these settings is cached (tests).
    static func isCached(settings: TLSSettings, verification: CertificateVerification) -> Bool {
        let key = key(settings: settings, verification: verification)
        return entries.withLock { $0.contains(key) }
    }

    private static func key(settings: TLSSettings, verification: CertificateVerification) -> Key {
        var normalized = settings
        // Only what shapes the context is part of the key.
        normalized.peerName = nil
        normalized.verifiesPeerName = true
        normalized.pinnedPublicKeyHashes = []
        normalized.manuallyEvaluatesTrust = false
        return Key(settings: normalized, verification: verification)
    }

    private static func makeContext(
        settings: TLSSettings,
        verification: CertificateVerification
    ) throws -> NIOSSLContext {
        var configuration: TLSConfiguration
        if settings.isServer, let key = settings.privateKey {
            configuration = .makeServerConfiguration(
                certificateChain: settings.certificateChain.map { .certificate($0) },
                privateKey: .privateKey(key)
            )
        } else {
            configuration = .makeClientConfiguration()
            if let key = settings.privateKey {
                configuration.certificateChain = settings.certificateChain.map { .certificate($0) }
                configuration.privateKey = .privateKey(key)
            }
        }
        configuration.minimumTLSVersion = settings.minimumTLSVersion
        configuration.maximumTLSVersion = settings.maximumTLSVersion
        configuration.trustRoots = settings.trustRoots
        configuration.applicationProtocols = settings.applicationProtocols
        configuration.certificateVerification = verification
        configuration.shutdownTimeout = settings.shutdownTimeout
        if let suites = settings.cipherSuites {
            configuration.cipherSuiteValues = suites
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw GCDAsyncSocketError(
                code: .badConfig,
                message: "The TLS settings cannot be used: \(error)",
                underlying: error
            )
        }
    }
}
