public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What happened during one load, in the spirit of `URLSessionTaskMetrics`: one transaction per request–response
/// exchange (each redirect hop and each retry with credentials is one), or one for a response served from the cache.
public struct URLConnectionMetrics: Sendable {
    /// Where a transaction's response came from.
    public enum FetchType: Sendable, Hashable {
        /// From the network (a revalidation answered with 304 too).
        case networkLoad
        /// From the response cache, without a request.
        case localCache
    }

    /// One request and its response.
    public struct Transaction: Sendable {
        /// The request as sent (its URL after redirects, the method the redirect rules chose).
        public var request: URLRequest
        /// The response, when one arrived.
        public var response: HTTPURLResponse?
        /// Network load or cache.
        public var resourceFetchType: FetchType
        /// When the transaction began (the load asked for it).
        public var fetchStartDate: Date
        /// When the request went to the engine.
        public var requestStartDate: Date?
        /// When the response's head arrived.
        public var responseStartDate: Date?
        /// When the response's body ended (or was read off, for a redirect or a challenge).
        public var responseEndDate: Date?
        /// `"http/1.1"`, `"http/1.0"` or `"h2"` (ALPN's names), nil for a cached response.
        public var networkProtocolName: String?
        /// Request body bytes handed to the connection.
        public var countOfRequestBodyBytesSent: Int64
        /// Response body bytes received (decoded, when the body was gzip or deflate).
        public var countOfResponseBodyBytesReceived: Int64
        /// The name lookup, connection and TLS times are not known: AsyncHTTPClient, under Tether, neither reports
        /// them nor lets a caller observe its connection pool's resolution, connect and handshake (no connection
        /// delegate, resolver or channel initializer of the caller's; its tracing has one span per request). Always
        /// nil.
        public var domainLookupStartDate: Date? { nil }
        /// Not known (see ``domainLookupStartDate``). Always nil.
        public var connectStartDate: Date? { nil }
        /// Not known (see ``domainLookupStartDate``). Always nil.
        public var secureConnectionStartDate: Date? { nil }
        /// Whether the request went on a connection that an earlier request used: not known either, as
        /// AsyncHTTPClient does not say which connection of its pool it chose. Always nil.
        public var isReusedConnection: Bool? { nil }
    }

    /// The transactions, in order.
    public var transactions: [Transaction]
    /// From the load's start to its end.
    public var taskInterval: DateInterval
    /// The redirects followed.
    public var redirectCount: Int
}
