import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct URLConnectionRedirectTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    @Test func followsARedirectChainShowingEveryHopToTheDelegate() async throws {
        let delegate = RecordingDelegate()
        let connection = try await load(request(self.server.url("/redirect/3")), delegate: delegate)
        let redirects = delegate.events.compactMap { event -> Int? in
            if case .willSend(_, _, let status?) = event { return status }
            return nil
        }
        #expect(redirects == [302, 302, 302])
        #expect(delegate.events.last == .finished)
        #expect(connection.currentRequest.url?.path == "/echo")
        #expect(try Echo(delegate.body).path == "/echo")
    }

    @Test func nilFromWillSendDeliversTheRedirectResponseAndItsBody() async throws {
        let delegate = RecordingDelegate()
        delegate.onRedirect = { _, _ in nil }
        try await load(request(self.server.url("/redirect/1?code=301")), delegate: delegate)
        #expect(
            delegate.mainEvents.dropFirst() == [
                .willSend(url: self.server.url("/echo").absoluteString, method: "GET", redirectStatus: 301),
                .response(status: 301, expectedLength: 11), .data(11), .finished,
            ]
        )
        #expect(String(decoding: delegate.body, as: UTF8.self) == "redirecting")
    }

    @Test func aDifferentRequestFromWillSendIsFollowedInstead() async throws {
        let delegate = RecordingDelegate()
        let detour = self.server.url("/hello")
        delegate.onRedirect = { _, _ in URLRequest(url: detour) }
        let connection = try await load(request(self.server.url("/redirect/1")), delegate: delegate)
        #expect(String(decoding: delegate.body, as: UTF8.self) == "hello")
        #expect(connection.currentRequest.url == detour)
    }

    @Test func aRequestFromWillSendThatCannotBeLoadedFailsWithUnsupportedURL() async throws {
        let delegate = RecordingDelegate()
        let elsewhere = URL(string: "http:///no-host")!
        delegate.onRedirect = { _, _ in URLRequest(url: elsewhere) }
        try await load(request(self.server.url("/redirect/1")), delegate: delegate)
        #expect(delegate.events.last == .failed(.unsupportedURL))
        #expect(delegate.lastError?.failingURL == elsewhere)
    }

    @Test func aRedirectLoopFailsWithTooManyRedirects() async throws {
        let delegate = RecordingDelegate()
        try await load(request(self.server.url("/loop")), delegate: delegate)
        #expect(delegate.events.last == .failed(.httpTooManyRedirects))
        #expect(delegate.lastError?.failingURL?.path == "/loop")
    }

    @Test func moreHopsThanTheLimitFailButTheLimitItselfPasses() async throws {
        let configuration = URLConnection.Configuration(responseCache: nil, maximumRedirects: 3)
        let ok = try await URLConnection.data(
            for: request(self.server.url("/redirect/3")),
            configuration: configuration
        )
        #expect((ok.1 as? HTTPURLResponse)?.statusCode == 200)
        await #expect(throws: URLError.self) {
            _ = try await URLConnection.data(for: request(self.server.url("/redirect/4")), configuration: configuration)
        }
    }

    @Test(arguments: [
        (301, "POST", "GET"), (302, "POST", "GET"), (303, "POST", "GET"), (303, "PUT", "GET"),
        (307, "POST", "POST"), (308, "PUT", "PUT"), (301, "PUT", "PUT"),
    ])
    func redirectMethodRules(status: Int, method: String, expected: String) async throws {
        var post = request(self.server.url("/redirect/1?code=\(status)"), method: method)
        post.httpBody = Data("payload".utf8)
        post.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let (data, _) = try await URLConnection.data(for: post, configuration: .uncached)
        let echo = try Echo(data)
        #expect(echo.method == expected)
        #expect(echo.bodyLength == (expected == "GET" ? 0 : 7))
        #expect((echo.header("Content-Type") != nil) == (expected != "GET"))
    }

    @Test func crossOriginHopsDropCredentialsAndCookiesButSameOriginHopsKeepThem() async throws {
        let crossTarget = self.server.url("/echo", host: "localhost").absoluteString
        var cross = request(self.server.url("/to?url=\(crossTarget)"))
        cross.setValue("Basic dTpw", forHTTPHeaderField: "Authorization")
        cross.setValue("a=b", forHTTPHeaderField: "Cookie")
        cross.setValue("kept", forHTTPHeaderField: "X-Custom")
        let crossEcho = try Echo(try await URLConnection.data(for: cross, configuration: .uncached).0)
        #expect(crossEcho.header("Authorization") == nil)
        #expect(crossEcho.header("Cookie") == nil)
        #expect(crossEcho.header("X-Custom") == "kept")

        var same = request(self.server.url("/redirect/1"))
        same.setValue("Basic dTpw", forHTTPHeaderField: "Authorization")
        let sameEcho = try Echo(try await URLConnection.data(for: same, configuration: .uncached).0)
        #expect(sameEcho.header("Authorization") == "Basic dTpw")
    }

    @Test func aStreamBodyIsRequestedAgainForA307() async throws {
        let payload = Data(repeating: 7, count: 100_000)
        var post = request(self.server.url("/redirect/1?code=307"), method: "POST")
        post.httpBodyStream = InputStream(data: payload)
        let delegate = RecordingDelegate()
        delegate.onNewBodyStream = { _ in InputStream(data: payload) }
        try await load(post, delegate: delegate)
        let echo = try Echo(delegate.body)
        #expect(echo.method == "POST")
        #expect(echo.bodyLength == payload.count)
    }

    @Test func aStreamBodyWithoutANewStreamFailsThe307() async throws {
        var post = request(self.server.url("/redirect/1?code=307"), method: "POST")
        post.httpBodyStream = InputStream(data: Data("abc".utf8))
        let delegate = RecordingDelegate()
        try await load(post, delegate: delegate)
        #expect(delegate.events.last == .failed(.requestBodyStreamExhausted))
    }
}
