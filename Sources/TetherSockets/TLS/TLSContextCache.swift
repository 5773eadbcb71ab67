import Crypto
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// `NIOSSLContext`s are costly to build (the system roots are parsed each time); connections with the same settings
/// share one.
enum TLSContextCache {
    private struct Key: Hashable {
        var settings: TLSSettings
        var verification: CertificateVerification
    }

    private static let contexts = NIOLockedValueBox<[Key: NIOSSLContext]>([:])
    private static let capacity = 64

    static func context(settings: TLSSettings, verification: CertificateVerification) throws -> NIOSSLContext {
        var normalized = settings
        // Only what shapes the context is part of the key.
        normalized.peerName = nil
        normalized.verifiesPeerName = true
        normalized.pinnedPublicKeyHashes = []
        normalized.manuallyEvaluatesTrust = false
        let key = Key(settings: normalized, verification: verification)
        if let cached = contexts.withLockedValue({ $0[key] }) { return cached }
        let context = try makeContext(settings: settings, verification: verification)
        contexts.withLockedValue { cache in
            if cache.count >= capacity { cache.removeAll() }
            cache[key] = context
        }
        return context
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
            throw AsyncSocketError(
                code: .badConfig,
                message: "The TLS settings cannot be used: \(error)",
                underlying: error
            )
        }
    }
}
