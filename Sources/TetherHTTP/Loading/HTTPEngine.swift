import AsyncHTTPClient
import NIOCore
import NIOHTTPCompression
import TetherConcurrency
import Tracing

/// Tether's shared AsyncHTTPClient engines: one per (event loop group, decoded-size limit, proxy), created on first use and
/// kept until ``shutdown()``. TLS settings travel with each request (AsyncHTTPClient pools connections by them), and
/// idle timeouts with each load (``IdleWatchdog``), so neither needs an engine of its own. Redirects are disabled in
/// the engine: Tether follows them itself.
enum HTTPEngine {
    private struct Key: Hashable {
        var group: ObjectIdentifier
        /// The decoded-size limit of gzip/deflate bodies; nil = bodies are not decoded.
        var decompressionLimit: Int?
        var proxy: URLConnection.Proxy?
    }

    private static let clients = LockedBox<[Key: HTTPClient]>([:])

    /// The HTTP/1 connections a shared engine keeps to one host at once; more loads wait for one of them.
    static let maximumConnectionsPerHost = 64

    /// The engine of a configuration: its own ``URLConnection/Configuration/httpClient``, or the shared one (for
    /// requests through `proxy`, one per proxy).
    static func client(for configuration: URLConnection.Configuration, proxy: URLConnection.Proxy? = nil) -> HTTPClient
    {
        if let client = configuration.httpClient { return client }
        let key = Key(
            group: ObjectIdentifier(configuration.eventLoopGroup as AnyObject),
            decompressionLimit: configuration.decompressionLimit,
            proxy: proxy
        )
        return clients.withLock { clients in
            if let client = clients[key] { return client }
            let client = HTTPClient(
                eventLoopGroup: configuration.eventLoopGroup,
                configuration: makeConfiguration(decompressionLimit: configuration.decompressionLimit, proxy: proxy)
            )
            clients[key] = client
            return client
        }
    }

    /// The settings of a shared engine (and what an engine given in ``URLConnection/Configuration/httpClient``
    /// should have).
    static func makeConfiguration(
        decompressionLimit: Int?,
        proxy: URLConnection.Proxy? = nil
    ) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            // A load's own timeout (its idle watchdog) decides sooner; 75 s is NSURLConnection's connect ceiling.
            timeout: .init(connect: .seconds(75)),
            // The bomb guard is the decoded size, not a ratio: ordinary text compresses well over 25×.
            decompression: decompressionLimit.map { .enabled(limit: .size($0)) } ?? .disabled
        )
        // A refused connection must fail now, not after retries until the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        // Loads are independent, as NSURLConnection's are: one host may have many at once (a load waiting for a
        // connection counts as idle for its timeout).
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maximumConnectionsPerHost
        switch proxy?.kind {
        case .http:
            let authorization = proxy?.credentials.map {
                HTTPClient.Authorization.basic(username: $0.user, password: $0.password)
            }
            configuration.proxy = .server(host: proxy!.host, port: proxy!.port, authorization: authorization)
        case .socks5:
            configuration.proxy = .socksServer(host: proxy!.host, port: proxy!.port)
        case nil:
            break
        }
        // No spans to record (no tracer bootstrapped): the engine skips its tracing calls, a cost per request.
        if InstrumentationSystem.tracer is NoOpTracer { configuration.tracing.tracer = nil }
        return configuration
    }

    /// Shuts the shared engines on `group` (all of them when nil) down; the next load makes new ones.
    static func shutdown(group: (any EventLoopGroup)?) async throws {
        let chosen = clients.withLock { clients -> [HTTPClient] in
            let keys = clients.keys.filter { key in group.map { key.group == ObjectIdentifier($0 as AnyObject) } ?? true
            }
            return keys.compactMap { clients.removeValue(forKey: $0) }
        }
        for client in chosen { try await client.shutdown() }
    }
}
