import Foundation
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
        for round in 0..<20 {
            let (data, response) = try await URLConnection.data(
                for: request(self.server.url("/closeafter/\(round)")),
                configuration: .uncached
            )
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(data == Data("closed after \(round)".utf8))
        }
    }
}
