public import AsyncHTTPClient
public import Logging
public import NIOCore
public import NIOPosix
public import NIOSSL

extension URLConnection {
    /// The engine settings of a connection: event loop group, response cache, redirect limit, TLS,
    /// decompression, the in-memory body limit and logging.
    ///
    /// Every load runs on one AsyncHTTPClient engine: ``httpClient`` when you give one, else Tether's shared engine
    /// for the event loop group and the decompression settings (see ``URLConnection/shutdownSharedEngines(on:)``).
    /// TLS settings and timeouts are per load, not per engine. A shared engine keeps up to 64 HTTP/1 connections to
    /// one host at once; a load waiting for one of them counts as idle for its `timeoutInterval`.
    public struct Configuration: Sendable {
        /// The AsyncHTTPClient engine the loads run on; nil (the default) = Tether's shared engine.
        ///
        /// Give one to share its connection pool with the rest of your program, or to control its lifetime: you
        /// shut it down, after the last load. Its own settings then apply instead of ``eventLoopGroup``,
        /// ``decompressesResponses`` and ``maximumDecodedBodySize``. Make it with redirects disallowed
        /// (`redirectConfiguration: .disallow`): Tether follows redirects itself, asking the delegate at each hop,
        /// and an engine that followed them would skip that.
        public var httpClient: HTTPClient?
        /// The event loop group that runs the I/O. Default `MultiThreadedEventLoopGroup.singleton`.
        public var eventLoopGroup: any EventLoopGroup
        /// The response cache; nil = no caching. Default ``HTTPResponseCache/shared``.
        public var responseCache: HTTPResponseCache?
        /// Redirects followed before the load fails with `URLError(.httpTooManyRedirects)`. Default 20.
        public var maximumRedirects: Int
        /// TLS settings for https; nil = system roots with full verification.
        public var tlsConfiguration: TLSConfiguration?
        /// Whether gzip and deflate bodies are decoded. Default true.
        public var decompressesResponses: Bool
        /// The most bytes a gzip or deflate body may decode to, on every API (the guard against decompression
        /// bombs); a body that decodes to more fails with `URLError(.cannotDecodeContentData)`. Default 1 GiB. The
        /// collecting APIs stop earlier, at ``maximumResponseBodySize`` (`.dataLengthExceedsMaximum`).
        public var maximumDecodedBodySize: Int
        /// The largest body that `data(for:)`, `sendSynchronousRequest`, `sendAsynchronousRequest` and
        /// ``URLConnectionOperation`` collect in memory. Default 64 MiB.
        public var maximumResponseBodySize: Int
        /// Debug logging; nil = silent.
        public var logger: Logger?
        /// The proxy every load goes through; nil (the default) = none, or the environment's when
        /// ``usesEnvironmentProxy`` is set. Not used with an ``httpClient`` of your own (its own proxy applies).
        public var proxy: URLConnection.Proxy?
        /// Whether loads without an explicit ``proxy`` use the environment's, as curl reads it: `https_proxy` for
        /// https, `http_proxy` for http, else `all_proxy` (each also in upper case, except `HTTP_PROXY`), and
        /// `no_proxy` for the hosts that go direct. Default false.
        public var usesEnvironmentProxy = false
        /// Whether a stored response that states no lifetime (no `max-age`, no `Expires`) may be reused without
        /// asking the server while it is fresh on a heuristic: for 10 % of the time between its `Last-Modified` and
        /// its `Date`, at most a week (RFC 9111 §4.2.2). Default true, as browsers do; false revalidates such a
        /// response every time.
        public var usesHeuristicFreshness = true

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - eventLoopGroup: The group that runs the I/O.
        ///   - responseCache: The response cache, or nil for none.
        ///   - maximumRedirects: Redirects followed before failing.
        ///   - tlsConfiguration: TLS settings for https, nil for system defaults.
        ///   - decompressesResponses: Whether gzip and deflate bodies are decoded.
        ///   - maximumResponseBodySize: The in-memory body limit of the collecting APIs.
        ///   - maximumDecodedBodySize: The most bytes a compressed body may decode to.
        ///   - logger: A logger for debug output.
        ///   - httpClient: The engine to run on; nil for Tether's shared engine.
        public init(
            eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
            responseCache: HTTPResponseCache? = .shared,
            maximumRedirects: Int = 20,
            tlsConfiguration: TLSConfiguration? = nil,
            decompressesResponses: Bool = true,
            maximumResponseBodySize: Int = 64 << 20,
            maximumDecodedBodySize: Int = 1 << 30,
            logger: Logger? = nil,
            httpClient: HTTPClient? = nil
        ) {
            precondition(maximumRedirects >= 0, "maximumRedirects must not be negative")
            precondition(maximumResponseBodySize >= 0, "maximumResponseBodySize must not be negative")
            precondition(maximumDecodedBodySize >= 0, "maximumDecodedBodySize must not be negative")
            self.eventLoopGroup = eventLoopGroup
            self.responseCache = responseCache
            self.maximumRedirects = maximumRedirects
            self.tlsConfiguration = tlsConfiguration
            self.decompressesResponses = decompressesResponses
            self.maximumResponseBodySize = maximumResponseBodySize
            self.maximumDecodedBodySize = maximumDecodedBodySize
            self.logger = logger
            self.httpClient = httpClient
        }

        /// The engine's decoded-size limit; nil when bodies are not decoded.
        var decompressionLimit: Int? { decompressesResponses ? maximumDecodedBodySize : nil }

        /// The default configuration.
        public static let `default` = Configuration()
    }
}

extension URLConnection {
    /// Shuts down Tether's shared AsyncHTTPClient engines (the loads of configurations without an
    /// ``Configuration/httpClient``): their connections close. Call it when none of their loads is running: before
    /// your program exits, or before you shut down an event loop group of your own; a later load makes a new engine.
    /// - Parameter eventLoopGroup: Only the engines on this group; nil (the default) for all.
    public static func shutdownSharedEngines(on eventLoopGroup: (any EventLoopGroup)? = nil) async throws {
        try await HTTPEngine.shutdown(group: eventLoopGroup)
    }
}
