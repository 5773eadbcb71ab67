public import Logging
public import NIOCore
public import NIOPosix
public import NIOSSL

extension URLConnection {
    /// The engine settings of a connection: event loop group, response cache, redirect limit, TLS,
    /// decompression, the in-memory body limit and logging.
    ///
    /// Connections with equal group, TLS configuration and decompression settings share one AsyncHTTPClient engine.
    public struct Configuration: Sendable {
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
        public init(
            eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
            responseCache: HTTPResponseCache? = .shared,
            maximumRedirects: Int = 20,
            tlsConfiguration: TLSConfiguration? = nil,
            decompressesResponses: Bool = true,
            maximumResponseBodySize: Int = 64 << 20,
            maximumDecodedBodySize: Int = 1 << 30,
            logger: Logger? = nil
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
        }

        /// The engine's decoded-size limit; nil when bodies are not decoded.
        var decompressionLimit: Int? { decompressesResponses ? maximumDecodedBodySize : nil }

        /// The default configuration.
        public static let `default` = Configuration()
    }
}
