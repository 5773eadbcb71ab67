import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

@testable import TetherHTTP

#if canImport(Glibc)
import Glibc
#endif

/// Which requests are sent again after their kept-alive connection turned out closed, and on which failures.
struct StaleConnectionRetryTests {
    static func request(_ method: HTTPMethod, body: Bool = false) -> HTTPClient.Request {
        // The URL is a literal that parses.
        try! HTTPClient.Request(url: "http://127.0.0.1:1/x", method: method, body: body ? .string("b") : nil)
    }

    @Test func onlySafeMethodsWithoutABodyAreRepeated() {
        for method: HTTPMethod in [.GET, .HEAD, .OPTIONS, .TRACE] {
            #expect(StaleConnectionRetry.mayRepeat(Self.request(method)))
            #expect(!StaleConnectionRetry.mayRepeat(Self.request(method, body: true)))
        }
        for method: HTTPMethod in [.POST, .PUT, .PATCH, .DELETE] {
            #expect(!StaleConnectionRetry.mayRepeat(Self.request(method)))
        }
    }

    @Test func theFailuresOfAClosedConnectionAreRetriedAndNoOthers() {
        let closed: [any Error] = [
            HTTPClientError.remoteConnectionClosed, ChannelError.ioOnClosedChannel, ChannelError.eof,
            ChannelError.alreadyClosed, ChannelError.outputClosed, IOError(errnoCode: ECONNRESET, reason: "read"),
            IOError(errnoCode: EPIPE, reason: "write"), NIOSSLError.uncleanShutdown,
        ]
        for error in closed { #expect(StaleConnectionRetry.isClosedConnection(error), "\(error)") }
        let others: [any Error] = [
            HTTPClientError.readTimeout, HTTPClientError.cancelled, ChannelError.connectTimeout(.seconds(1)),
            IOError(errnoCode: ECONNREFUSED, reason: "connect"), HTTPParserError.invalidChunkSize,
            CancellationError(),
        ]
        for error in others { #expect(!StaleConnectionRetry.isClosedConnection(error), "\(error)") }
    }
}
