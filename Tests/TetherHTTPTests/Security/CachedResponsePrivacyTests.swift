import AsyncHTTPClient
import Foundation
import NIOHTTP1
import NIOPosix
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the response cache keeps, for whom, and where: against in-process origins on 127.0.0.1.
@Suite(.timeLimit(.minutes(1)))
struct CachedResponsePrivacyTests {
    /// The value of the `Cookie` and `Authorization` headers the origin received, as the body.
    static func echoCredentials(
        _ cacheControl: String,
        vary: String? = nil
    )
        -> @Sendable (ScriptedOrigin.Request) ->
        ScriptedOrigin.Response
    {
        { request in
            var headers = [("Cache-Control", cacheControl)]
            if let vary { headers.append(("Vary", vary)) }
            let cookie = request.headers["Cookie"].joined(separator: "; ")
            let authorization = request.headers.first(name: "Authorization") ?? ""
            return ScriptedOrigin.Response(200, headers, "cookie=\(cookie)|authorization=\(authorization)")
        }
    }

    @Test func varyCookieIsMatchedAgainstTheCookiesTetherSends() async throws {
        let name = "sid-\(UUID().uuidString.prefix(8))"
        // A private cache: a shared one would not store a response to a request with cookies at all.
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache(isPrivate: true))
        try await withScriptedOrigin(Self.echoCredentials("max-age=600", vary: "Cookie")) { origin in
            let url = origin.url("/vary-cookie")
            func setStored(_ value: String) throws {
                let cookie = try #require(
                    HTTPCookie(properties: [.name: name, .value: value, .domain: "127.0.0.1", .path: "/vary-cookie"])
                )
                HTTPCookieStorage.shared.setCookie(cookie)
            }
            try setStored("A")
            let (first, _) = try await URLConnection.data(for: request(url), configuration: configuration)
            #expect(String(decoding: first, as: UTF8.self).contains("\(name)=A"))
            try setStored("B")
            let (second, _) = try await URLConnection.data(for: request(url), configuration: configuration)
            #expect(String(decoding: second, as: UTF8.self).contains("\(name)=B"))
            #expect(origin.requests(to: "/vary-cookie").count == 2)
        }
    }

    @Test func aSharedCacheDoesNotServeOneBearersResponseToAnother() async throws {
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache())
        try await withScriptedOrigin(Self.echoCredentials("max-age=60")) { origin in
            var bodies: [String] = []
            for token in ["A", "B"] {
                var bearer = request(origin.url("/me"))
                // Other tests' cookies for 127.0.0.1 are in the shared storage: this request carries none.
                bearer.httpShouldHandleCookies = false
                bearer.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                let (data, _) = try await URLConnection.data(for: bearer, configuration: configuration)
                bodies.append(String(decoding: data, as: UTF8.self))
            }
            #expect(bodies == ["cookie=|authorization=Bearer A", "cookie=|authorization=Bearer B"])
            #expect(origin.requests(to: "/me").count == 2)
        }
    }

    @Test func aSharedCacheStoresAnAuthenticatedResponseThatSaysPublic() async throws {
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache())
        try await withScriptedOrigin(Self.echoCredentials("public, max-age=60")) { origin in
            for token in ["A", "B"] {
                var bearer = request(origin.url("/public"))
                // Other tests' cookies for 127.0.0.1 are in the shared storage: this request carries none.
                bearer.httpShouldHandleCookies = false
                bearer.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                _ = try await URLConnection.data(for: bearer, configuration: configuration)
            }
            #expect(origin.requests(to: "/public").count == 1)
        }
    }

    @Test func aSharedCacheRevalidatesAnAuthenticatedResponseAsSMaxageSays() async throws {
        // `s-maxage` lets a shared cache keep the response, and makes it stale at once for that cache (while a
        // private cache could use it for ten minutes): the next user's request goes to the origin.
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache())
        try await withScriptedOrigin(Self.echoCredentials("max-age=600, s-maxage=0")) { origin in
            var bodies: [String] = []
            for token in ["A", "B"] {
                var bearer = request(origin.url("/shared"))
                // Other tests' cookies for 127.0.0.1 are in the shared storage: this request carries none.
                bearer.httpShouldHandleCookies = false
                bearer.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                let (data, _) = try await URLConnection.data(for: bearer, configuration: configuration)
                bodies.append(String(decoding: data, as: UTF8.self))
            }
            #expect(bodies == ["cookie=|authorization=Bearer A", "cookie=|authorization=Bearer B"])
            #expect(origin.requests(to: "/shared").count == 2)
        }
    }

    @Test func aPrivateCacheStoresAnAuthenticatedResponse() async throws {
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache(isPrivate: true))
        try await withScriptedOrigin(Self.echoCredentials("max-age=60")) { origin in
            for _ in 0..<2 {
                var bearer = request(origin.url("/mine"))
                // Other tests' cookies for 127.0.0.1 are in the shared storage: this request carries none.
                bearer.httpShouldHandleCookies = false
                bearer.setValue("Bearer A", forHTTPHeaderField: "Authorization")
                _ = try await URLConnection.data(for: bearer, configuration: configuration)
            }
            #expect(origin.requests(to: "/mine").count == 1)
        }
    }

    @Test func aPOSTWhoseSeeOtherIsFollowedInvalidatesItsTarget() async throws {
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache())
        let respond: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response = { request in
            switch (request.method, request.path) {
            case ("POST", "/doc"): ScriptedOrigin.Response(303, [("Location", "/done")], "posted")
            case (_, "/doc"): ScriptedOrigin.Response(200, [("Cache-Control", "max-age=600")], "document")
            default: ScriptedOrigin.Response(200, [], "done")
            }
        }
        try await withScriptedOrigin(respond) { origin in
            _ = try await URLConnection.data(for: request(origin.url("/doc")), configuration: configuration)
            let (posted, _) = try await URLConnection.data(
                for: request(origin.url("/doc"), method: "POST"),
                configuration: configuration
            )
            #expect(String(decoding: posted, as: UTF8.self) == "done")
            _ = try await URLConnection.data(for: request(origin.url("/doc")), configuration: configuration)
            #expect(origin.requests(to: "/doc").map(\.method) == ["GET", "POST", "GET"])
        }
    }

    @Test func aCallersOwnEngineThatDoesNotDecodeLeavesNoPlainLookingGzipInTheCache() async throws {
        // "hello, compressed", gzipped.
        let gzip: [UInt8] = [
            31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 203, 72, 205, 201, 201, 215, 81, 72, 206, 207, 45, 40, 74, 45, 46, 78, 77,
            1, 0, 18, 126, 25, 120, 17, 0, 0, 0,
        ]
        var settings = HTTPClient.Configuration(redirectConfiguration: .disallow)
        settings.decompression = .disabled
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: settings)
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache(), httpClient: client)
        let respond: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response = { _ in
            ScriptedOrigin.Response(200, [("Content-Encoding", "gzip"), ("Cache-Control", "max-age=600")], body: gzip)
        }
        do {
            try await withScriptedOrigin(respond) { origin in
                for _ in 0..<2 {
                    let (data, response) = try await URLConnection.data(
                        for: request(origin.url("/gz")),
                        configuration: configuration
                    )
                    #expect(Array(data) == gzip)
                    #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
                }
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test func theDiskCacheIsReadableByItsOwnerOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-cache-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        let url = URL(string: "http://example.test/private")!
        let response = HTTPURLResponse(
            url: url,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: [
                "Cache-Control": "max-age=60"
            ]
        )!
        cache.storeCachedResponse(
            CachedURLResponse(response: response, data: Data("x".utf8)),
            for: URLRequest(url: url)
        )
        func permissions(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).intValue
        }
        #expect(try permissions(directory.path) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        for file in files { #expect(try permissions(directory.appendingPathComponent(file).path) == 0o600) }
    }

    @Test func aDiskEntryKeepsNoCredentialItVariesOn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-cache-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory, isPrivate: true)
        let url = URL(string: "http://example.test/account")!
        var mine = URLRequest(url: url)
        mine.setValue("Bearer tok-s3cret", forHTTPHeaderField: "Authorization")
        let response = HTTPURLResponse(
            url: url,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: ["Cache-Control": "max-age=60", "Vary": "Authorization"]
        )!
        cache.storeCachedResponse(CachedURLResponse(response: response, data: Data("x".utf8)), for: mine)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        for file in files {
            let contents = try Data(contentsOf: directory.appendingPathComponent(file))
            #expect(!String(decoding: contents, as: UTF8.self).contains("tok-s3cret"))
        }
        #expect(cache.cachedResponse(for: mine) != nil)
        var theirs = URLRequest(url: url)
        theirs.setValue("Bearer other", forHTTPHeaderField: "Authorization")
        #expect(cache.cachedResponse(for: theirs) == nil)
    }

    @Test func theCacheKeyIgnoresTheDefaultPortAndTheCaseOfTheHost() {
        let cache = HTTPResponseCache()
        let stored = URL(string: "http://example.test:80/page")!
        let response = HTTPURLResponse(
            url: stored,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: [
                "Cache-Control": "max-age=60"
            ]
        )!
        cache.storeCachedResponse(
            CachedURLResponse(response: response, data: Data("x".utf8)),
            for: URLRequest(url: stored)
        )
        #expect(cache.cachedResponse(for: URLRequest(url: URL(string: "http://example.test/page")!)) != nil)
        #expect(cache.cachedResponse(for: URLRequest(url: URL(string: "http://EXAMPLE.test/page")!)) != nil)
        #expect(cache.cachedResponse(for: URLRequest(url: URL(string: "http://example.test:8080/page")!)) == nil)
        #expect(cache.cachedResponse(for: URLRequest(url: URL(string: "https://example.test:443/page")!)) == nil)
    }
}
