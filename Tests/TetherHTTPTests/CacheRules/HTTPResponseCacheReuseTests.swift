import Foundation
import NIOHTTP1
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The reuse rules end to end, through `URLConnection` against a real origin on loopback, on virtual time: the cache's
/// ``ManualHTTPCacheClock`` is moved instead of waited for, and the origin writes its dates from it.
struct HTTPResponseCacheReuseTests {
    typealias Respond = @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response

    let clock = ManualHTTPCacheClock()

    func httpDate(_ offset: TimeInterval = 0) -> String {
        CacheTestHeaderFixup.httpDate(milliseconds: (self.clock.now.timeIntervalSince1970 + offset) * 1000)
    }

    func load(
        _ url: URL,
        method: String = "GET",
        headers: [String: String] = [:],
        configuration: URLConnection.Configuration
    ) async throws -> (body: String, response: HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLConnection.data(for: request, configuration: configuration)
        return (String(decoding: data, as: UTF8.self), try #require(response as? HTTPURLResponse))
    }

    func configuration(heuristics: Bool = true) -> URLConnection.Configuration {
        var configuration = URLConnection.Configuration(responseCache: HTTPResponseCache(clock: self.clock))
        configuration.usesHeuristicFreshness = heuristics
        return configuration
    }

    @Test func aResponseWithOnlyLastModifiedIsReusedForATenthOfItsUnchangedTime() async throws {
        let headers = [("Date", self.httpDate()), ("Last-Modified", self.httpDate(-86_400))]
        let respond: Respond = { _ in .init(200, headers, "v1") }
        try await withScriptedOrigin(respond) { origin in
            let configuration = self.configuration()
            _ = try await self.load(origin.url("/h"), configuration: configuration)
            self.clock.advance(by: .seconds(8_639))
            let reused = try await self.load(origin.url("/h"), configuration: configuration)
            #expect(reused.body == "v1")
            #expect(reused.response.value(forHTTPHeaderField: "Age") == "8639")
            #expect(origin.requests(to: "/h").count == 1)
            self.clock.advance(by: .seconds(2))
            _ = try await self.load(origin.url("/h"), configuration: configuration)
            #expect(origin.requests(to: "/h").count == 2)
            #expect(origin.requests(to: "/h").last?.headers.first(name: "If-Modified-Since") == headers[1].1)
        }
    }

    @Test func heuristicFreshnessTurnedOffRevalidatesEveryTime() async throws {
        let headers = [("Date", self.httpDate()), ("Last-Modified", self.httpDate(-86_400))]
        let respond: Respond = { _ in .init(200, headers, "v1") }
        try await withScriptedOrigin(respond) { origin in
            let configuration = self.configuration(heuristics: false)
            _ = try await self.load(origin.url("/h"), configuration: configuration)
            self.clock.advance(by: .seconds(1))
            _ = try await self.load(origin.url("/h"), configuration: configuration)
            #expect(origin.requests(to: "/h").count == 2)
        }
    }

    @Test func twoVariantsOfOneURLAreKept() async throws {
        let respond: Respond = { request in
            let foo = request.headers.first(name: "Foo") ?? "-"
            return .init(200, [("Cache-Control", "max-age=600"), ("Vary", "Foo")], "for \(foo)")
        }
        try await withScriptedOrigin(respond) { origin in
            let configuration = self.configuration()
            let one = try await self.load(origin.url("/v"), headers: ["Foo": "1"], configuration: configuration)
            let two = try await self.load(origin.url("/v"), headers: ["Foo": "2"], configuration: configuration)
            let oneAgain = try await self.load(origin.url("/v"), headers: ["Foo": "1"], configuration: configuration)
            let twoAgain = try await self.load(origin.url("/v"), headers: ["Foo": "2"], configuration: configuration)
            #expect([one.body, two.body, oneAgain.body, twoAgain.body] == ["for 1", "for 2", "for 1", "for 2"])
            #expect(origin.requests(to: "/v").count == 2)
        }
    }

    @Test func aHeadIsAnsweredFromTheStoredGetWithoutABody() async throws {
        let respond: Respond = { _ in .init(200, [("Cache-Control", "max-age=600"), ("A", "1")], "hello") }
        try await withScriptedOrigin(respond) { origin in
            let configuration = self.configuration()
            _ = try await self.load(origin.url("/g"), configuration: configuration)
            let head = try await self.load(origin.url("/g"), method: "HEAD", configuration: configuration)
            #expect(head.body.isEmpty)
            #expect(head.response.statusCode == 200)
            #expect(head.response.value(forHTTPHeaderField: "A") == "1")
            #expect(origin.requests(to: "/g").count == 1)
        }
    }

    @Test func aStaleResponseStandsInForA503WithinStaleIfError() async throws {
        let requests = LockedBox(0)
        let respond: Respond = { _ in
            let number = requests.withLock { count -> Int in
                count += 1
                return count
            }
            return number == 1
                ? .init(200, [("Cache-Control", "max-age=2, stale-if-error=60")], "v1")
                : .init(503, [], "down")
        }
        try await withScriptedOrigin(respond) { origin in
            let configuration = self.configuration()
            _ = try await self.load(origin.url("/e"), configuration: configuration)
            self.clock.advance(by: .seconds(3))
            let stale = try await self.load(origin.url("/e"), configuration: configuration)
            #expect(stale.response.statusCode == 200)
            #expect(stale.body == "v1")
            self.clock.advance(by: .seconds(60))
            let error = try await self.load(origin.url("/e"), configuration: configuration)
            #expect(error.response.statusCode == 503)
            #expect(origin.requests(to: "/e").count == 3)
        }
    }

    @Test func aRangeIsAnsweredFromACompleteStoredResponse() async throws {
        let respond: Respond = { _ in .init(200, [("Cache-Control", "max-age=600")], "0123456789") }
        try await withScriptedOrigin(respond) { origin in
            let configuration = self.configuration()
            _ = try await self.load(origin.url("/r"), configuration: configuration)
            let part = try await self.load(
                origin.url("/r"),
                headers: ["Range": "bytes=2-4"],
                configuration: configuration
            )
            #expect(part.response.statusCode == 206)
            #expect(part.body == "234")
            #expect(part.response.value(forHTTPHeaderField: "Content-Range") == "bytes 2-4/10")
            let whole = try await self.load(
                origin.url("/r"),
                headers: ["Range": "bytes=2-4, 6-7"],
                configuration: configuration
            )
            #expect(whole.response.statusCode == 200)
            #expect(whole.body == "0123456789")
            #expect(origin.requests(to: "/r").count == 1)
        }
    }

    @Test func aPostResponseWithItsOwnContentLocationAnswersALaterGet() async throws {
        let respond: Respond = { request in
            .init(200, [("Cache-Control", "max-age=600"), ("Content-Location", "/p")], "posted by \(request.method)")
        }
        try await withScriptedOrigin(respond) { origin in
            let configuration = self.configuration()
            _ = try await self.load(origin.url("/p"), method: "POST", configuration: configuration)
            let get = try await self.load(origin.url("/p"), configuration: configuration)
            #expect(get.body == "posted by POST")
            #expect(origin.requests(to: "/p").count == 1)
        }
    }
}
