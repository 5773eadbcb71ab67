import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Heuristic freshness (RFC 9111 §4.2.2) as a table: a response that states no lifetime is fresh for 10 % of the
/// time between its `Last-Modified` and its `Date`, at most a week, and only for a heuristically cacheable status
/// or a `public` response.
struct HeuristicFreshnessTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func date(_ offset: TimeInterval) -> String {
        CacheTestHeaderFixup.httpDate(milliseconds: (self.now.timeIntervalSince1970 + offset) * 1000)
    }

    static func entry(status: Int = 200, _ headers: [String: String], age: TimeInterval = 0) -> CacheEntry {
        CacheEntry(
            url: URL(string: "http://h.example/a")!,
            statusCode: status,
            headers: headers,
            body: Data("stored".utf8),
            requestDate: self.now.addingTimeInterval(-age),
            responseDate: self.now.addingTimeInterval(-age),
            varyValues: [:],
            storagePolicy: 0
        )
    }

    @Test(
        "The lifetime of a response without max-age or Expires",
        arguments: [
            // status, Cache-Control, Last-Modified before Date (nil: none), Date given, lifetime
            (200, nil, 86_400, true, 8_640),
            (200, nil, 10, true, 1),
            (200, nil, 300 * 86_400, true, 7 * 86_400),  // capped at a week
            (200, nil, -60, true, 0),  // Last-Modified after Date
            (200, nil, nil, true, 0),  // no Last-Modified
            (200, nil, 86_400, false, 8_640),  // no Date: the time it was received
            (404, nil, 86_400, true, 8_640),
            (501, nil, 86_400, true, 8_640),
            (599, nil, 86_400, true, 0),  // not heuristically cacheable
            (599, "public", 86_400, true, 8_640),  // unless marked public
            (200, "max-age=5", 86_400, true, 5),  // a stated lifetime wins
            (200, "no-cache", 86_400, true, 8_640),  // fresh, but no-cache revalidates anyway
        ] as [(Int, String?, TimeInterval?, Bool, TimeInterval)]
    )
    func heuristicLifetime(
        status: Int,
        cacheControl: String?,
        unchanged: TimeInterval?,
        hasDate: Bool,
        lifetime: TimeInterval
    ) {
        var headers: [String: String] = [:]
        if let cacheControl { headers["Cache-Control"] = cacheControl }
        if let unchanged { headers["Last-Modified"] = Self.date(-unchanged) }
        if hasDate { headers["Date"] = Self.date(0) }
        let entry = Self.entry(status: status, headers)
        #expect(CacheRules.freshnessLifetime(entry) == lifetime)
        // Turned off, only a stated lifetime counts.
        #expect(CacheRules.freshnessLifetime(entry, heuristics: false) == (CacheRules.explicitLifetime(entry) ?? 0))
    }

    @Test("An entry is reused on a heuristic until a tenth of its unchanged time has passed, unless turned off")
    func reuseOnAHeuristic() {
        let headers = ["Date": Self.date(0), "Last-Modified": Self.date(-86_400)]
        let request = URLRequest(url: URL(string: "http://h.example/a")!)
        let young = Self.entry(headers, age: 8_639)
        let old = Self.entry(headers, age: 8_640)
        #expect(CacheRules.canUseWithoutRevalidation(young, request: request, now: Self.now))
        #expect(!CacheRules.canUseWithoutRevalidation(old, request: request, now: Self.now))
        #expect(!CacheRules.canUseWithoutRevalidation(young, request: request, now: Self.now, heuristics: false))
        #expect(CacheRules.isHeuristicallyFresh(young, now: Self.now))
        #expect(!CacheRules.isHeuristicallyFresh(Self.entry(["Cache-Control": "max-age=60"]), now: Self.now))
        // Served on a heuristic, it says how old it is.
        #expect(young.makeServedResponse(now: Self.now).value(forHTTPHeaderField: "Age") == "8639")
    }

    @Test("A status outside the storable ones is stored on a heuristic only when public and validated")
    func publicMakesAnyFinalStatusStorable() {
        let get = URLRequest(url: URL(string: "http://h.example/a")!)
        let lastModified = ["Last-Modified": Self.date(-86_400)]
        #expect(!CacheRules.isStorable(request: get, statusCode: 599, headers: lastModified))
        #expect(
            CacheRules.isStorable(
                request: get,
                statusCode: 599,
                headers: lastModified.merging(["Cache-Control": "public"]) { $1 }
            )
        )
        #expect(!CacheRules.isStorable(request: get, statusCode: 599, headers: ["Cache-Control": "public"]))
    }
}
