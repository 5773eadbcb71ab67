import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The canonical request (NSURLConnection's first `willSend`): lowercase scheme and host, a path of at least "/".
struct CanonicalRequestTests {
    /// The slow path alone: what `URLComponents` makes of `url`.
    static func parsed(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if components.path.isEmpty { components.path = "/" }
        return components.url ?? url
    }

    @Test(arguments: [
        "http://127.0.0.1:8080/small",
        "http://localhost/",
        "https://example.com/a/b?q=1#f",
        "HTTP://EXAMPLE.com/path",
        "http://Example.COM:81/x",
        "http://example.com",
        "http://example.com?q=1",
        "http://user:pw@Example.com/",
        "http://[::1]:8080/v6",
        "http://[FE80::1]/v6",
        "http://ex%41mple.com/",
        "https://example.com/%7Euser/",
    ])
    func theFastPathAgreesWithURLComponents(_ string: String) throws {
        let url = try #require(URL(string: string))
        let canonical = HTTPLoad.canonicalize(URLRequest(url: url)).url
        #expect(canonical == Self.parsed(url))
    }

    @Test func onlyAlreadyCanonicalURLsTakeTheFastPath() {
        #expect(HTTPLoad.isCanonical("http://127.0.0.1:8080/small"))
        #expect(HTTPLoad.isCanonical("https://example.com/a?b"))
        #expect(!HTTPLoad.isCanonical("HTTP://example.com/"))
        #expect(!HTTPLoad.isCanonical("http://Example.com/"))
        #expect(!HTTPLoad.isCanonical("http://example.com"))
        #expect(!HTTPLoad.isCanonical("http://example.com?q"))
        #expect(!HTTPLoad.isCanonical("http://u@example.com/"))
        #expect(!HTTPLoad.isCanonical("http:///path"))
        #expect(!HTTPLoad.isCanonical("mailto:someone"))
    }

    @Test func cacheKeysIgnoreTheFragmentOnly() throws {
        let plain = try #require(URL(string: "http://example.com/a?b=1"))
        let withFragment = try #require(URL(string: "http://example.com/a?b=1#section"))
        let other = try #require(URL(string: "http://example.com/a?b=2#section"))
        #expect(CacheRules.key(for: withFragment) == CacheRules.key(for: plain))
        #expect(CacheRules.key(for: other) != CacheRules.key(for: plain))
    }

    @Test func headerNamesMatchIgnoringASCIICaseOnly() {
        #expect(HeaderLookup.namesMatch("Content-Length", "content-length"))
        #expect(HeaderLookup.namesMatch("ETAG", "ETag"))
        #expect(!HeaderLookup.namesMatch("ETag", "ETags"))
        #expect(!HeaderLookup.namesMatch("Vary", "Varz"))
        #expect(!HeaderLookup.namesMatch("A-B", "A_B"))
        #expect(HeaderLookup.value("cache-control", in: ["Cache-Control": "no-store"]) == "no-store")
    }
}
