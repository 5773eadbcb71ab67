import Foundation
import Testing
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP/2 over TLS, negotiated in ALPN, against an in-process NIOHTTP2 server (``HTTP2TestServer``, one per test):
/// the version in the response, redirects, large bodies, multiplexed loads, the cache, and HTTP/1.1 when the server
/// offers only that.
@Suite("HTTP/2 over TLS when the server offers h2 in ALPN", .timeLimit(.minutes(2)))
struct URLConnectionHTTP2Tests {
    /// Trusts the test authority; no cache unless a test gives one.
    let configuration: URLConnection.Configuration

    init() async throws {
        var configuration = try trustingOwnAuthority(caFile: try await TestCertificates.shared().caCertificatePath)
        configuration.responseCache = nil
        self.configuration = configuration
    }

    @Test("data(for:) loads over HTTP/2: the response says HTTP/2, status, headers and body are right")
    func dataLoadsOverHTTP2() async throws {
        try await withHTTP2TestServer { server in
            let (data, response) = try await URLConnection.data(
                for: request(server.url("/hello")),
                configuration: self.configuration
            )
            let http = try #require(response as? HTTPURLResponse)
            #expect(data == Data("hello over h2".utf8))
            #expect(http.statusCode == 200)
            #expect(http.httpVersion == "HTTP/2")
            #expect(http.expectedContentLength == 13)
            #expect(http.mimeType == "text/plain")
            #expect(http.textEncodingName == "utf-8")
            #expect(http.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")

            let (seen, _) = try await URLConnection.data(
                for: request(server.url("/echo-version")),
                configuration: self.configuration
            )
            #expect(String(decoding: seen, as: UTF8.self) == "HTTP/2.0", "the server saw an HTTP/2 stream")
        }
    }

    @Test("header names arrive in lower case over HTTP/2 and are still found in any case")
    func headerNamesInAnyCase() async throws {
        try await withHTTP2TestServer { server in
            let (_, response) = try await URLConnection.data(
                for: request(server.url("/headers")),
                configuration: self.configuration
            )
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.value(forHTTPHeaderField: "X-Mixed-Case") == "Yes")
            #expect(http.value(forHTTPHeaderField: "x-mixed-case") == "Yes")
        }
    }

    @Test("the delegate face: a 302 is followed over HTTP/2 and the delegate sees the hop")
    func delegateFollowsARedirect() async throws {
        try await withHTTP2TestServer { server in
            let delegate = RecordingDelegate()
            try await load(request(server.url("/redirect")), delegate: delegate, configuration: self.configuration)
            #expect(
                delegate.mainEvents == [
                    .willSend(url: server.url("/redirect").absoluteString, method: "GET", redirectStatus: nil),
                    .willSend(url: server.url("/hello").absoluteString, method: "GET", redirectStatus: 302),
                    .response(status: 200, expectedLength: 13),
                    .data(13),
                    .finished,
                ]
            )
            #expect(delegate.body == Data("hello over h2".utf8))
            #expect(delegate.lastResponse?.httpVersion == "HTTP/2")
            #expect(delegate.lastResponse?.url == server.url("/hello"))
            #expect(server.log.connectionCount == 1, "both hops on one connection")
        }
    }

    @Test("a 1 MiB body arrives complete over HTTP/2, collected and through the delegate")
    func aLargeBodyArrivesComplete() async throws {
        let size = 1 << 20
        let expected = Data((0..<size).map { UInt8($0 % 251) })
        try await withHTTP2TestServer { server in
            let (data, response) = try await URLConnection.data(
                for: request(server.url("/big?size=\(size)")),
                configuration: self.configuration
            )
            #expect((response as? HTTPURLResponse)?.httpVersion == "HTTP/2")
            #expect(data.count == size)
            #expect(data == expected)

            let delegate = RecordingDelegate()
            try await load(
                request(server.url("/big?size=\(size)")),
                delegate: delegate,
                configuration: self.configuration
            )
            #expect(
                delegate.mainEvents == [
                    .willSend(url: server.url("/big?size=\(size)").absoluteString, method: "GET", redirectStatus: nil),
                    .response(status: 200, expectedLength: Int64(size)),
                    .data(size),
                    .finished,
                ]
            )
            #expect(delegate.body == expected)
        }
    }

    @Test("20 concurrent loads are answered together, multiplexed on one HTTP/2 connection")
    func concurrentLoadsMultiplex() async throws {
        let count = 20
        try await withHTTP2TestServer { server in
            // A first load makes the connection and tells the engine that this server speaks HTTP/2 (before the
            // first handshake ends the engine may open a connection per waiting load, as for HTTP/1).
            _ = try await URLConnection.data(for: request(server.url("/hello")), configuration: self.configuration)
            // The server answers `/together` only once all 20 requests are in: they pass only if they are in
            // flight at once, and on one connection only if they are multiplexed.
            let versions = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        let (data, response) = try await URLConnection.data(
                            for: request(server.url("/together?n=\(count)")),
                            configuration: self.configuration
                        )
                        #expect(data == Data("together".utf8))
                        return (response as? HTTPURLResponse)?.httpVersion
                    }
                }
                var versions: [String?] = []
                for try await version in group { versions.append(version) }
                return versions
            }
            #expect(versions == Array(repeating: "HTTP/2", count: count))
            #expect(server.log.requests(to: "/together") == count)
            #expect(server.log.connectionCount == 1, "one connection carried every stream")
        }
    }

    @Test("a response cached from HTTP/2 is served from the cache and still says HTTP/2")
    func theCacheKeepsHTTP2() async throws {
        var configuration = self.configuration
        configuration.responseCache = HTTPResponseCache()
        try await withHTTP2TestServer { server in
            for _ in 0..<2 {
                let (data, response) = try await URLConnection.data(
                    for: request(server.url("/cached")),
                    configuration: configuration
                )
                #expect(data == Data("cached".utf8))
                #expect((response as? HTTPURLResponse)?.httpVersion == "HTTP/2")
                #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
            }
            #expect(server.log.requests(to: "/cached") == 1, "the second load was served from the cache")
        }
    }

    @Test("a server offering only http/1.1 in ALPN is spoken to in HTTP/1.1")
    func anHTTP11OnlyServerGetsHTTP11() async throws {
        try await withHTTP2TestServer(offering: ["http/1.1"]) { server in
            let (data, response) = try await URLConnection.data(
                for: request(server.url("/echo-version")),
                configuration: self.configuration
            )
            #expect(String(decoding: data, as: UTF8.self) == "HTTP/1.1")
            #expect((response as? HTTPURLResponse)?.httpVersion == "HTTP/1.1")

            let delegate = RecordingDelegate()
            try await load(request(server.url("/redirect")), delegate: delegate, configuration: self.configuration)
            #expect(delegate.body == Data("hello over h2".utf8))
            #expect(delegate.lastResponse?.httpVersion == "HTTP/1.1")
        }
    }
}
