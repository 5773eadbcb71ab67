import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTPCompression
import NIOSSL
import TetherConcurrency
import Tracing

/// The process-wide `HTTPClient`s, one per (event loop group, TLS configuration, decoded-size limit), created lazily
/// and never shut down. Redirects are disabled in the engine: Tether follows them itself.
enum HTTPEngine {
    private struct Key: Hashable {
        var group: ObjectIdentifier
        var tls: TLSKey?
        /// The decoded-size limit of gzip/deflate bodies; nil = bodies are not decoded.
        var decompressionLimit: Int?
        /// Nanoseconds; set for engines whose own timeouts stand in for a load's idle watchdog.
        var idleTimeout: Int64?
    }

    /// At most this many distinct idle timeouts get engines of their own (engines are never shut down).
    static let maximumTimeoutEngines = 8

    private struct TLSKey: Hashable {
        var configuration: TLSConfiguration
        static func == (lhs: TLSKey, rhs: TLSKey) -> Bool {
            lhs.configuration.bestEffortEquals(rhs.configuration)
        }
        func hash(into hasher: inout Hasher) {
            self.configuration.bestEffortHash(into: &hasher)
        }
    }

    private static let clients = LockedBox<[Key: HTTPClient]>([:])
    /// The engines without TLS settings (the common case), found without building or hashing a TLS key.
    private static let plainClients = LockedBox<[PlainKey: HTTPClient]>([:])

    private struct PlainKey: Hashable {
        var group: ObjectIdentifier
        var decompressionLimit: Int?
        var idleTimeout: Int64?

        init(group: ObjectIdentifier, decompressionLimit: Int?, idleTimeout: Int64?) {
            self.group = group
            self.decompressionLimit = decompressionLimit
            self.idleTimeout = idleTimeout
        }

        init(_ key: Key) {
            self.init(group: key.group, decompressionLimit: key.decompressionLimit, idleTimeout: key.idleTimeout)
        }
    }

    /// The engine for these settings. With `idleTimeout`, an engine whose connect and idle-read timeouts are that
    /// long (what NSURLConnection's `timeoutInterval` means), for loads that run without a watchdog; nil when
    /// `maximumTimeoutEngines` distinct timeouts already have one.
    static func client(
        eventLoopGroup: any EventLoopGroup,
        tlsConfiguration: TLSConfiguration?,
        decompressionLimit: Int?,
        idleTimeout: TimeAmount? = nil
    ) -> HTTPClient? {
        if case .none = tlsConfiguration {
            let plain = PlainKey(
                group: ObjectIdentifier(eventLoopGroup as AnyObject),
                decompressionLimit: decompressionLimit,
                idleTimeout: idleTimeout?.nanoseconds
            )
            if let client = self.plainClients.withLock({ $0[plain] }) { return client }
        }
        let key = Key(
            group: ObjectIdentifier(eventLoopGroup as AnyObject),
            tls: tlsConfiguration.map(TLSKey.init),
            decompressionLimit: decompressionLimit,
            idleTimeout: idleTimeout?.nanoseconds
        )
        let found: HTTPClient? = self.clients.withLock { clients in
            if let client = clients[key] { return client }
            if idleTimeout != nil, clients.keys.count(where: { $0.idleTimeout != nil }) >= Self.maximumTimeoutEngines {
                return nil
            }
            let connectTimeout = min(TimeAmount.seconds(75), idleTimeout ?? .seconds(75))
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tlsConfiguration,
                redirectConfiguration: .disallow,
                timeout: .init(connect: connectTimeout, read: idleTimeout),
                // The bomb guard is the decoded size, not a ratio: ordinary text compresses well over 25×.
                decompression: decompressionLimit.map { .enabled(limit: .size($0)) } ?? .disabled
            )
            // A refused connection must fail now, not after retries until the connect timeout.
            configuration.connectionPool.retryConnectionEstablishment = false
            // No spans to record (no tracer bootstrapped): the engine skips its tracing calls, a cost per request.
            if InstrumentationSystem.tracer is NoOpTracer { configuration.tracing.tracer = nil }
            let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
            clients[key] = client
            return client
        }
        if let found, case .none = tlsConfiguration {
            self.plainClients.withLock { $0[PlainKey(key)] = found }
        }
        return found
    }
}
