import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The reuse rules besides freshness, as tables: byte ranges from a complete entry, `Vary` values compared without
/// the differences that do not change their meaning, a qualified `no-cache`, `immutable`, `stale-if-error`, a `HEAD`
/// that describes a stored response, a 304's `Content-Encoding`, and a `POST` response that answers later `GET`s.
struct CacheReuseRulesTests {
    static let now = HeuristicFreshnessTests.now

    static func entry(_ headers: [String: String], body: String = "0123456789", age: TimeInterval = 0) -> CacheEntry {
        var entry = HeuristicFreshnessTests.entry(headers, age: age)
        entry.body = Data(body.utf8)
        return entry
    }

    @Test(
        "One byte range of a 10-byte representation; anything else is not a range the cache answers",
        arguments: [
            ("bytes=0-1", 0...1), ("bytes=1-", 1...9), ("bytes=-1", 9...9), ("bytes=-20", 0...9),
            ("bytes=5-50", 5...9), ("BYTES = 2-3", nil), ("Bytes=2-3", 2...3), ("bytes=9-9", 9...9),
            ("bytes=10-", nil), ("bytes=3-2", nil), ("bytes=-0", nil), ("bytes=0-1,3-4", nil),
            ("items=0-1", nil), ("bytes=a-1", nil), ("bytes=1-b", nil), ("bytes=-", nil), ("bytes=", nil),
        ] as [(String, ClosedRange<Int>?)]
    )
    func byteRanges(value: String, expected: ClosedRange<Int>?) {
        #expect(CacheRules.byteRange(value, length: 10) == expected)
    }

    @Test("A complete entry answers a range with a 206, its Content-Range and Content-Length")
    func partialResponseFromACompleteEntry() throws {
        let entry = Self.entry(["Cache-Control": "max-age=60", "Content-Length": "10", "A": "1"])
        let partial = try #require(CacheRules.partialResponse(entry, range: "bytes=-3"))
        #expect(partial.statusCode == 206)
        #expect(partial.body == Data("789".utf8))
        #expect(partial.header("Content-Range") == "bytes 7-9/10")
        #expect(partial.header("Content-Length") == "3")
        #expect(partial.header("A") == "1")
        #expect(CacheRules.partialResponse(entry, range: "bytes=10-") == nil)
        var notComplete = entry
        notComplete.statusCode = 404
        #expect(CacheRules.partialResponse(notComplete, range: "bytes=0-1") == nil)
    }

    @Test(
        "Vary values: list whitespace never counts; Accept-Language case and order do not either",
        arguments: [
            ("accept-language", "en, de", "de,EN", true), ("accept-language", "en;q=0.5, de", "de, en; q=0.5", true),
            ("accept-language", "en", "en, de", false), ("accept-language", "en;q=0.5", "en;q=0.6", false),
            ("accept", "a/b, c/d", "a/b,c/d", true), ("accept", "a/b, c/d", "c/d, a/b", false),
            ("foo", "A", "a", false),
        ] as [(String, String, String, Bool)]
    )
    func varyValuesAreNormalised(name: String, first: String, second: String, same: Bool) {
        let normalized = { CacheRules.normalizedVaryValue(name: name, $0) }
        #expect((normalized(first) == normalized(second)) == same)
    }

    @Test(
        "A response in one language is selected by a request whose first preference is that language",
        arguments: [
            ("de", "fr;q=0.5, de;q=1.0", true), ("de", "de-CH, fr", false), ("de-ch", "de, fr", true),
            ("de", "fr, de", false), ("de", "*", false), ("de", "de;q=0", false), ("de", "fr;q=0.4, de;q=x", false),
            (nil, "de", false), ("de, en", "de", false),
        ] as [(String?, String, Bool)]
    )
    func languageSelection(contentLanguage: String?, acceptLanguage: String, selects: Bool) {
        var headers = ["Vary": "Accept-Language"]
        headers["Content-Language"] = contentLanguage
        #expect(CacheRules.languageSelects(Self.entry(headers), acceptLanguage: acceptLanguage) == selects)
    }

    @Test("A new response replaces the variants it may stand for and keeps the ones that differ in a Vary value")
    func otherVariants() {
        func variant(_ vary: String?, _ values: [String: String]) -> CacheEntry {
            var entry = Self.entry(vary.map { ["Vary": $0] } ?? [:])
            entry.varyValues = values
            return entry
        }
        let foo1 = variant("Foo", ["foo": "1"])
        #expect(CacheRules.isOtherVariant(variant("Foo", ["foo": "2"]), than: foo1))
        #expect(!CacheRules.isOtherVariant(variant("Foo", ["foo": "1"]), than: foo1))
        #expect(!CacheRules.isOtherVariant(variant(nil, [:]), than: foo1))  // Foo unknown for the new request
        #expect(!CacheRules.isOtherVariant(variant("Foo", ["foo": "2"]), than: variant(nil, [:])))
        #expect(CacheRules.isOtherVariant(variant("Foo, Bar", ["foo": "2", "bar": "1"]), than: foo1))
    }

    @Test("A qualified no-cache keeps its fields out of a reuse without revalidation, not the response")
    func qualifiedNoCache() {
        let request = URLRequest(url: URL(string: "http://h.example/a")!)
        let entry = Self.entry(["Cache-Control": "no-cache=\"a, B\", max-age=3600", "A": "1", "b": "2", "C": "3"])
        #expect(CacheRules.qualifiedNoCacheFields(entry) == ["a", "b"])
        #expect(CacheRules.canUseWithoutRevalidation(entry, request: request, now: Self.now))
        #expect(!CacheRules.mustRevalidate(entry))
        #expect(CacheRules.servedWithoutRevalidation(entry).headers.keys.sorted() == ["C", "Cache-Control"])
        let plain = Self.entry(["Cache-Control": "no-cache, max-age=3600"])
        #expect(!CacheRules.canUseWithoutRevalidation(plain, request: request, now: Self.now))
        #expect(CacheRules.mustRevalidate(plain))
        #expect(CacheRules.servedWithoutRevalidation(plain).headers == plain.headers)
    }

    @Test(
        "stale-if-error: a stale entry stands in for a server error within its window",
        arguments: [
            // response Cache-Control, request Cache-Control, age, may serve
            ("max-age=2, stale-if-error=60", nil, 3, true), ("max-age=2, stale-if-error=60", nil, 62, true),
            ("max-age=2, stale-if-error=60", nil, 63, false), ("max-age=2", nil, 3, false),
            ("max-age=2", "stale-if-error=10", 3, true),
            ("max-age=2, stale-if-error=60, must-revalidate", nil, 3, false),
            ("max-age=2, stale-if-error=x", nil, 3, false),
        ] as [(String, String?, TimeInterval, Bool)]
    )
    func staleIfError(response: String, request: String?, age: TimeInterval, serves: Bool) {
        var urlRequest = URLRequest(url: URL(string: "http://h.example/a")!)
        urlRequest.setValue(request, forHTTPHeaderField: "Cache-Control")
        let entry = Self.entry(["Cache-Control": response], age: age)
        #expect(CacheRules.canServeOnError(entry, request: urlRequest, now: Self.now) == serves)
    }

    @Test(
        "A 200 to a HEAD describes the stored response when its validators and length are the stored ones",
        arguments: [
            ([:], true), (["ETag": "\"v1\""], true), (["ETag": "\"v2\""], false),
            (["Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"], false), (["Content-Length": "10"], true),
            (["Content-Length": "11"], false), (["Template-A": "2"], true),
        ] as [([String: String], Bool)]
    )
    func headDescribesTheStoredResponse(headers: [String: String], describes: Bool) {
        let stored = Self.entry(["ETag": "\"v1\"", "Content-Length": "10", "Template-A": "1"])
        #expect(CacheRules.headResponse(headers, describes: stored) == describes)
    }

    @Test("A 304 replaces Content-Encoding only when the stored body is still encoded")
    func contentEncodingFromA304() {
        var encoded = Self.entry(["Content-Encoding": "br", "ETag": "\"v1\""])
        encoded.refresh(with: ["Content-Encoding": "zstd", "X": "1"], requestDate: Self.now, responseDate: Self.now)
        #expect(encoded.header("Content-Encoding") == "zstd")
        #expect(encoded.header("X") == "1")
        var decoded = Self.entry(["ETag": "\"v1\""])
        decoded.refresh(with: ["Content-Encoding": "gzip"], requestDate: Self.now, responseDate: Self.now)
        #expect(decoded.header("Content-Encoding") == nil)
    }

    @Test("immutable is read from the response")
    func immutable() {
        #expect(CacheRules.isImmutable(Self.entry(["Cache-Control": "max-age=10000, immutable"])))
        #expect(!CacheRules.isImmutable(Self.entry(["Cache-Control": "max-age=10000"])))
    }

    @Test("A POST response answers later GETs with explicit freshness and Content-Location of its own URL")
    func postResponsesForLaterGETs() {
        var post = URLRequest(url: URL(string: "http://h.example/a?x=1")!)
        post.httpMethod = "POST"
        let fresh = ["Cache-Control": "max-age=60"]
        func storable(_ headers: [String: String]) -> Bool {
            CacheRules.isStorable(request: post, statusCode: 200, headers: headers)
        }
        #expect(storable(fresh.merging(["Content-Location": "/a?x=1"]) { $1 }))
        #expect(storable(fresh.merging(["Content-Location": "http://H.example:80/a?x=1"]) { $1 }))
        #expect(!storable(fresh.merging(["Content-Location": "/b"]) { $1 }))
        #expect(!storable(fresh))
        #expect(!storable(["Content-Location": "/a?x=1", "ETag": "\"v1\""]))
        post.httpMethod = "PUT"
        #expect(!storable(fresh.merging(["Content-Location": "/a?x=1"]) { $1 }))
    }
}
