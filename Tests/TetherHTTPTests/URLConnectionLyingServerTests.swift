import Foundation
import NIOPosix
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Servers that break HTTP/1.1 on purpose: each gets a typed `URLError`, nothing hangs, and the engine stays usable.
struct URLConnectionLyingServerTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test(
        "lying chunk framing is a bad server response on both faces",
        arguments: ["/badchunksize", "/longchunk"]
    )
    func lyingChunkFraming(path: String) async throws {
        await expectURLError(.badServerResponse) {
            _ = try await URLConnection.data(for: request(self.server.url(path)), configuration: .uncached)
        }
        let delegate = RecordingDelegate()
        try await load(request(self.server.url(path)), delegate: delegate)
        #expect(delegate.events.last == .failed(.badServerResponse))
        // The engine is still fine for the next load.
        let (data, _) = try await URLConnection.data(for: request(self.server.url("/hello")), configuration: .uncached)
        #expect(data == Data("hello".utf8))
    }

    @Test func aOneMebibyteHeaderIsABadServerResponse() async throws {
        await expectURLError(.badServerResponse) {
            _ = try await URLConnection.data(for: request(self.server.url("/hugeheader")), configuration: .uncached)
        }
        let (data, _) = try await URLConnection.data(for: request(self.server.url("/hello")), configuration: .uncached)
        #expect(data == Data("hello".utf8))
    }

    @Test("a keep-alive connection the server closed between requests does not fail the next request")
    func aConnectionClosedBetweenKeepAliveRequests() async throws {
        // On an engine of its own: in another engine's pool, the connections this route closes would wait for
        // another test's request, and a POST (not sent again) or a counted send on one of them would fail that test.
        for round in 0..<20 {
            let (data, response) = try await URLConnection.data(
                for: request(self.server.url("/closeafter/\(round)")),
                configuration: Self.closeAfterEngine
            )
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data == Data("closed after \(round)".utf8))
        }
    }

    /// An engine of these tests' own (engines are per event loop group): the shared engine's pool may hold a
    /// connection that another test's server route closed, and a send on it never reaches the server's counter.
    static let ownEngine = URLConnection.Configuration(
        eventLoopGroup: MultiThreadedEventLoopGroup(numberOfThreads: 1),
        responseCache: nil
    )

    /// The `closeafter` test's engine: the connections that route closes stay out of every other test's pool.
    static let closeAfterEngine = URLConnection.Configuration(
        eventLoopGroup: MultiThreadedEventLoopGroup(numberOfThreads: 1),
        responseCache: nil
    )

    @Test("a GET that every connection drops unanswered is sent three times, then fails with networkConnectionLost")
    func retriesEndAfterThreeSends() async throws {
        let path = "/closenow/\(UUID().uuidString)"  // the server is shared with other tests: a path of our own
        await expectURLError(.networkConnectionLost) {
            _ = try await URLConnection.data(for: request(self.server.url(path)), configuration: Self.ownEngine)
        }
        let counts = try await self.server.counts()
        #expect(
            counts["path:\(path)"] == StaleConnectionRetry.maximumAttempts,
            "\(counts.filter { $0.key.contains(path) })"
        )
    }

    @Test("a POST that a connection drops unanswered is not sent again")
    func aPostIsNotRetried() async throws {
        let path = "/closenow/\(UUID().uuidString)"
        var post = request(self.server.url(path), method: "POST")
        post.httpBody = Data("once".utf8)
        let sent = post
        await expectURLError(.networkConnectionLost) {
            _ = try await URLConnection.data(for: sent, configuration: Self.ownEngine)
        }
        #expect(try await self.server.counts()["path:\(path)"] == 1)
    }
}
