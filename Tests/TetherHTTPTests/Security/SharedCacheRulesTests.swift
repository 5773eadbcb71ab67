import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a shared cache (the default) stores and a private one (`isPrivate: true`) also stores, without I/O.
struct SharedCacheRulesTests {
    @Test(
        arguments: [
            // request header, response Cache-Control, other response header, shared stores?, private stores?
            ("", "max-age=60", "", true, true),
            ("Authorization", "max-age=60", "", false, true),
            ("Cookie", "max-age=60", "", false, true),
            ("Authorization", "public, max-age=60", "", true, true),
            ("Authorization", "max-age=60, s-maxage=60", "", true, true),
            ("Authorization", "max-age=60, must-revalidate", "", true, true),
            ("Cookie", "public, max-age=60", "", true, true),
            ("", "private, max-age=60", "", false, true),
            ("", "max-age=60", "Set-Cookie", false, true),
            ("", "public, max-age=60", "Set-Cookie", false, true),
        ]
    )
    func aSharedCacheKeepsNoOneUsersResponse(
        requestHeader: String,
        cacheControl: String,
        responseHeader: String,
        shared: Bool,
        privateStores: Bool
    ) {
        var request = URLRequest(url: URL(string: "http://example.test/")!)
        if !requestHeader.isEmpty { request.setValue("secret", forHTTPHeaderField: requestHeader) }
        var headers = ["Cache-Control": cacheControl]
        if !responseHeader.isEmpty { headers[responseHeader] = "s=1" }
        #expect(CacheRules.isStorable(request: request, statusCode: 200, headers: headers, isShared: true) == shared)
        #expect(
            CacheRules.isStorable(request: request, statusCode: 200, headers: headers, isShared: false) == privateStores
        )
    }

    @Test(
        arguments: [
            // Cache-Control, in a shared cache?, lifetime, must revalidate when stale?
            ("max-age=600, s-maxage=5", true, 5.0, true),
            ("max-age=600, s-maxage=5", false, 600.0, false),
            ("max-age=600, proxy-revalidate", true, 600.0, true),
            ("max-age=600, proxy-revalidate", false, 600.0, false),
            ("max-age=600, must-revalidate", false, 600.0, true),
        ]
    )
    func aSharedCacheFollowsSMaxageAndProxyRevalidate(
        cacheControl: String,
        isShared: Bool,
        lifetime: Double,
        mustRevalidate: Bool
    ) {
        var entry = CacheEntry(
            url: URL(string: "http://example.test/")!,
            statusCode: 200,
            headers: ["Cache-Control": cacheControl],
            body: Data(),
            requestDate: Date(),
            responseDate: Date(),
            varyValues: [:],
            storagePolicy: 0
        )
        entry.isInSharedCache = isShared
        #expect(CacheRules.freshnessLifetime(entry) == lifetime)
        #expect(CacheRules.mustRevalidate(entry) == mustRevalidate)
    }

    @Test func varyIsMatchedAgainstTheRequestAsSent() {
        let url = URL(string: "http://example.test/")!
        var sentA = URLRequest(url: url)
        sentA.setValue("sid=A", forHTTPHeaderField: "Cookie")
        var sentB = URLRequest(url: url)
        sentB.setValue("sid=B", forHTTPHeaderField: "Cookie")
        let headers = ["Vary": "Cookie", "Cache-Control": "max-age=60"]
        let entry = CacheEntry(
            url: url,
            statusCode: 200,
            headers: headers,
            body: Data(),
            requestDate: Date(),
            responseDate: Date(),
            varyValues: CacheRules.varyValues(for: sentA, headers: headers),
            storagePolicy: 0
        )
        let cache = HTTPResponseCache(isPrivate: true)
        cache.store(entry)
        #expect(cache.entry(for: URLRequest(url: url), asSent: { _ in sentA }) != nil)
        #expect(cache.entry(for: URLRequest(url: url), asSent: { _ in sentB }) == nil)
    }
}
