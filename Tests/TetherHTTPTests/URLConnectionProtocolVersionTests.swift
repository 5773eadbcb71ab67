import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response carries the protocol version it arrived with (`HTTPURLResponse.httpVersion`), live and from the cache.
struct URLConnectionProtocolVersionTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func anHTTP11ServersResponseSaysHTTP11() async throws {
        let (_, response) = try await URLConnection.data(
            for: request(self.server.url("/hello")),
            configuration: .uncached
        )
        #expect((response as? HTTPURLResponse)?.httpVersion == "HTTP/1.1")
    }

    @Test func anHTTP10ServersResponseSaysHTTP10OnEveryFace() async throws {
        let (data, response) = try await URLConnection.data(
            for: request(self.server.url("/http10")),
            configuration: .uncached
        )
        #expect(data == Data("ok".utf8))
        #expect((response as? HTTPURLResponse)?.httpVersion == "HTTP/1.0")

        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/http10")), delegate: delegate)
        #expect(delegate.lastResponse?.httpVersion == "HTTP/1.0")
    }

    @Test func aCachedResponseKeepsItsVersion() async throws {
        let cache = HTTPResponseCache()
        let configuration = URLConnection.Configuration(responseCache: cache)
        let path = "/http10/\(UUID().uuidString)"  // the server is shared with other tests: a path of this test's own
        let url = self.server.url(path)
        _ = try await URLConnection.data(for: request(url), configuration: configuration)
        let (data, response) = try await URLConnection.data(for: request(url), configuration: configuration)
        #expect(data == Data("ok".utf8))
        #expect((response as? HTTPURLResponse)?.httpVersion == "HTTP/1.0")
        let counts = try await self.server.counts()
        #expect(counts["path:\(path)"] == 1, "\(counts)")
    }

    @Test func aResponseMadeElsewhereHasNoVersion() throws {
        let response = try #require(
            HTTPURLResponse(url: self.server.url("/x"), statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
        )
        #expect(response.httpVersion == nil)
        #expect(VersionedHTTPURLResponse.versionString(major: 2, minor: 0) == "HTTP/2")
        #expect(VersionedHTTPURLResponse.versionString(major: 1, minor: 0) == "HTTP/1.0")
    }
}
