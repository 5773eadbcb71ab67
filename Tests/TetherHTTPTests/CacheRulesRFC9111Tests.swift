import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cache rules the cache-tests suite found missing or wrong (``CacheConformanceTests``), one by one without a
/// server: strict HTTP-dates, `Age` parsing, the first of a repeated directive, storable statuses and
/// `must-understand`, hop-by-hop fields, `max-stale` and `min-fresh`, the `Age` a served entry carries,
/// `stale-while-revalidate`, `Vary` lists and the URLs an unsafe request invalidates.
struct CacheRulesRFC9111Tests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let url = URL(string: "http://h.example/a")!

    static func entry(_ headers: [String: String], received: Date = now) -> CacheEntry {
        CacheEntry(
            url: self.url,
            statusCode: 200,
            headers: headers,
            body: Data(),
            requestDate: received,
            responseDate: received,
            varyValues: [:],
            storagePolicy: 0
        )
    }

    static func request(cacheControl: String? = nil) -> URLRequest {
        var request = URLRequest(url: self.url)
        request.setValue(cacheControl, forHTTPHeaderField: "Cache-Control")
        return request
    }

    @Test(
        "An HTTP-date that is not exactly one of the three forms is invalid, so such an Expires has expired",
        arguments: [
            "Thu, 18 Aug 2050 02:01:18 UTC", "Thu 18 Aug 2050 02:01:18 GMT", "Thu, 18  Aug  2050 02:01:18 GMT",
            "Thu, 18-Aug-2050 02:01:18 GMT", "Thu, 18 Aug 2050 02.01.18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT",
            "Thu, 18 Aug 50 02:01:18 GMT", "Thu, 18 Aug 2050 02:01:18 AEST", "Thu, 18 Aug 2050 24:01:18 GMT",
        ]
    )
    func malformedDatesAreInvalid(text: String) {
        #expect(HTTPDate.parse(text) == nil)
        #expect(CacheRules.freshnessLifetime(Self.entry(["Expires": text])) == 0)
    }

    @Test("The three forms parse, names in any case; an RFC 850 year is at most 50 years ahead")
    func validDatesParse() {
        let example = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == example)
        #expect(HTTPDate.parse("SUN, 06 NOV 1994 08:49:37 gmt") == example)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == example)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == example)
        #expect(HTTPDate.parse("Tue, 29 Feb 2028 23:59:60 GMT") == Date(timeIntervalSince1970: 1_835_481_600))
        let year2026 = Date(timeIntervalSince1970: 1_780_000_000)
        #expect(
            HTTPDate.parse("Thursday, 18-Aug-50 02:01:18 GMT", now: year2026)
                == HTTPDate.parse("Thu, 18 Aug 2050 02:01:18 GMT")
        )
        #expect(
            HTTPDate.parse("Friday, 18-Aug-90 02:01:18 GMT", now: year2026)
                == HTTPDate.parse("Fri, 18 Aug 1990 02:01:18 GMT")
        )
    }

    @Test("Every one-character change of a valid date parses to a date or to nil, without trapping")
    func mutatedDatesDoNotTrap() {
        let replacements: [Character] = [" ", ",", "-", ":", "0", "9", "a", "Z", "\u{301}", "é", "\t"]
        for valid in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            let characters = Array(valid)
            for index in characters.indices {
                for replacement in replacements {
                    var changed = characters
                    changed[index] = replacement
                    _ = HTTPDate.parse(String(changed))
                    changed.remove(at: index)
                    _ = HTTPDate.parse(String(changed))
                }
            }
        }
    }

    @Test("Age: the first member of a list, a non-negative integer, else ignored; capped at 2^31")
    func ageValues() {
        #expect(CacheRules.ageValue("7200") == 7200)
        #expect(CacheRules.ageValue("7200, 0") == 7200)
        #expect(CacheRules.ageValue("0, 7200") == 0)
        for invalid in ["7200.0", "-7200", "abc", "7200;foo=bar", "", " "] {
            #expect(CacheRules.ageValue(invalid) == 0)
        }
        #expect(CacheRules.ageValue("99999999999999999999999") == 2_147_483_648)
        #expect(!CacheRules.isFresh(Self.entry(["Cache-Control": "max-age=3600", "Age": "7200, 0"]), now: Self.now))
        #expect(CacheRules.isFresh(Self.entry(["Cache-Control": "max-age=3600", "Age": "7200.0"]), now: Self.now))
    }

    @Test("A directive given twice counts as first given")
    func firstDirectiveWins() {
        #expect(CacheRules.directives("max-age=1800, max-age=1")["max-age"] == "1800")
        #expect(CacheRules.freshnessLifetime(Self.entry(["Cache-Control": "max-age=1, max-age=1800"])) == 1)
    }

    @Test("Any final status with explicit freshness is stored; must-understand overrides no-store for known ones")
    func storableStatuses() {
        let get = Self.request()
        for status in [299, 400, 500, 503, 599] {
            #expect(CacheRules.isStorable(request: get, statusCode: status, headers: ["Cache-Control": "max-age=60"]))
            #expect(!CacheRules.isStorable(request: get, statusCode: status, headers: ["ETag": "\"x\""]))
        }
        #expect(!CacheRules.isStorable(request: get, statusCode: 206, headers: ["Cache-Control": "max-age=60"]))
        let mustUnderstand = ["Cache-Control": "max-age=60, no-store, must-understand"]
        #expect(CacheRules.isStorable(request: get, statusCode: 200, headers: mustUnderstand))
        #expect(!CacheRules.isStorable(request: get, statusCode: 299, headers: mustUnderstand))
        #expect(
            !CacheRules.isStorable(request: get, statusCode: 200, headers: ["Cache-Control": "max-age=60, no-store"])
        )
    }

    @Test("Connection, the fields it names and the other hop-by-hop fields are not stored")
    func hopByHopFieldsAreNotStored() {
        let stored = CacheRules.storedHeaders([
            "Connection": "a, B", "a": "1", "b": "2", "c": "3", "Keep-Alive": "timeout=5",
            "Transfer-Encoding": "chunked",
            "Cache-Control": "max-age=60",
        ])
        #expect(stored == ["c": "3", "Cache-Control": "max-age=60"])
        let cache = HTTPResponseCache()
        cache.store(Self.entry(["Connection": "x", "x": "1", "Cache-Control": "max-age=60"]))
        #expect(cache.entry(for: Self.request())?.headers == ["Cache-Control": "max-age=60"])
    }

    @Test("max-stale accepts a stale entry (not one that must revalidate); min-fresh wants freshness to spare")
    func maxStaleAndMinFresh() {
        let stale = Self.entry(["Cache-Control": "max-age=2"], received: Self.now.addingTimeInterval(-5))
        #expect(!CacheRules.canUseWithoutRevalidation(stale, request: Self.request(), now: Self.now))
        #expect(
            CacheRules.canUseWithoutRevalidation(
                stale,
                request: Self.request(cacheControl: "max-stale=1000"),
                now: Self.now
            )
        )
        #expect(
            CacheRules.canUseWithoutRevalidation(stale, request: Self.request(cacheControl: "max-stale"), now: Self.now)
        )
        #expect(
            !CacheRules.canUseWithoutRevalidation(
                stale,
                request: Self.request(cacheControl: "max-stale=1"),
                now: Self.now
            )
        )
        let mustRevalidate = Self.entry(
            ["Cache-Control": "max-age=2, must-revalidate"],
            received: Self.now.addingTimeInterval(-5)
        )
        #expect(
            !CacheRules.canUseWithoutRevalidation(
                mustRevalidate,
                request: Self.request(cacheControl: "max-stale"),
                now: Self.now
            )
        )
        let fresh = Self.entry(["Cache-Control": "max-age=1500", "Age": "1000"])
        #expect(
            CacheRules.canUseWithoutRevalidation(
                fresh,
                request: Self.request(cacheControl: "min-fresh=400"),
                now: Self.now
            )
        )
        #expect(
            !CacheRules.canUseWithoutRevalidation(
                fresh,
                request: Self.request(cacheControl: "min-fresh=1000"),
                now: Self.now
            )
        )
    }

    @Test("A served entry says its current age in Age; the stored one keeps the Age it came with")
    func servedEntriesCarryTheirAge() {
        let entry = Self.entry(
            ["Cache-Control": "max-age=100000", "age": "30"],
            received: Self.now.addingTimeInterval(-3)
        )
        let served = entry.makeServedResponse(now: Self.now)
        #expect(served.value(forHTTPHeaderField: "Age") == "33")
        #expect(entry.header("Age") == "30")
        #expect(
            Self.entry(["Cache-Control": "max-age=60"]).makeServedResponse(now: Self.now).value(
                forHTTPHeaderField: "Age"
            ) == "0"
        )
    }

    @Test("stale-while-revalidate: stale within the window, nothing fresher asked for, no revalidation required")
    func staleWhileRevalidate() {
        let entry = Self.entry(
            ["Cache-Control": "max-age=1, stale-while-revalidate=4"],
            received: Self.now.addingTimeInterval(-3)
        )
        #expect(CacheRules.canServeWhileRevalidating(entry, request: Self.request(), now: Self.now))
        #expect(
            !CacheRules.canServeWhileRevalidating(entry, request: Self.request(), now: Self.now.addingTimeInterval(3))
        )
        #expect(
            !CacheRules.canServeWhileRevalidating(entry, request: Self.request(cacheControl: "no-cache"), now: Self.now)
        )
        #expect(
            !CacheRules.canServeWhileRevalidating(
                entry,
                request: Self.request(cacheControl: "max-age=10"),
                now: Self.now
            )
        )
        let mustRevalidate = Self.entry(
            ["Cache-Control": "max-age=1, stale-while-revalidate=4, must-revalidate"],
            received: Self.now.addingTimeInterval(-3)
        )
        #expect(!CacheRules.canServeWhileRevalidating(mustRevalidate, request: Self.request(), now: Self.now))
    }

    @Test("Vary compares lists without the whitespace around their commas")
    func varyListsAreNormalised() {
        var entry = Self.entry(["Cache-Control": "max-age=60", "Vary": "Foo"])
        entry.varyValues = ["foo": "1, 2"]
        for value in ["1,2", " 1, 2 ", "1 ,\t2"] {
            var request = Self.request()
            request.setValue(value, forHTTPHeaderField: "Foo")
            #expect(CacheRules.matchesVary(entry, request: request))
        }
        var other = Self.request()
        other.setValue("1, 3", forHTTPHeaderField: "Foo")
        #expect(!CacheRules.matchesVary(entry, request: other))
    }

    @Test("An unsafe request invalidates its Location and Content-Location when they have its origin")
    func invalidatedURLs() {
        let post = URL(string: "http://h.example/test/1")!
        let urls = CacheRules.invalidatedURLs(
            after: post,
            headers: ["Location": "/test/1/location_target", "Content-Location": "http://other.example/x"]
        )
        #expect(urls.map(\.absoluteString) == ["http://h.example/test/1/location_target"])
        #expect(
            CacheRules.invalidatedURLs(after: post, headers: ["Content-Location": "cl"]).map(\.absoluteString) == [
                "http://h.example/test/cl"
            ]
        )
    }
}
