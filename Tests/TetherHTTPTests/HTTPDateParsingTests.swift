import Foundation
import Testing

@testable import TetherHTTP

/// `CacheRules.parseDate` reads the three HTTP-date formats (``HTTPDate``): the same answer every time, for any
/// number of distinct strings.
struct HTTPDateParsingTests {
    /// 1994-11-06 08:49:37 UTC, RFC 9110's example.
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func theThreeFormatsParseTheSameEveryTime(text: String) {
        #expect(CacheRules.parseDate(text) == Self.example)
        #expect(CacheRules.parseDate(text) == Self.example)
    }

    @Test func invalidDatesAreNilEveryTime() {
        for text in ["0", "", "Sun, 06 Nov 1994", "yesterday"] {
            #expect(CacheRules.parseDate(text) == nil)
            #expect(CacheRules.parseDate(text) == nil)
        }
        #expect(CacheRules.parseDate(nil) == nil)
    }

    @Test func moreDistinctDatesThanItKeepsStillParse() {
        for second in 0..<200 {
            let text = String(format: "Sun, 06 Nov 1994 08:%02d:%02d GMT", second / 60, second % 60)
            let expected = Date(timeIntervalSince1970: 784_108_800 + TimeInterval(second))
            #expect(CacheRules.parseDate(text) == expected)
        }
        #expect(CacheRules.parseDate("Sun, 06 Nov 1994 08:49:37 GMT") == Self.example)
    }

    /// Found by FuzzCacheControl: swift-corelibs-foundation's `DateFormatter.date(from:)` traps when its parse stops
    /// before a combining mark, so a server's `Expires` could stop the process. Only visible ASCII reaches it; an
    /// HTTP-date holds nothing else.
    @Test(arguments: [
        "Th, 26-Nov-26 20:0\u{7EC},0:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\u{7EC}",
        "Sun, 06 Nov 1994 08:49:3\u{301}7 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT\r\n", "Sun,\t06 Nov 1994 08:49:37 GMT",
    ])
    func aValueWithAnythingButVisibleASCIIIsNotADate(text: String) {
        #expect(CacheRules.parseDate(text) == nil)
    }

    @Test func anExpiresWithACombiningMarkIsAnInvalidExpires() {
        let now = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let entry = CacheEntry(
            url: URL(string: "http://example.invalid/")!,
            statusCode: 200,
            headers: ["Expires": "Th, 26-Nov-26 20:0\u{7EC},0:00 GMT"],
            body: Data(),
            requestDate: now,
            responseDate: now,
            varyValues: [:],
            storagePolicy: 0
        )
        #expect(CacheRules.freshnessLifetime(entry) == 0)
    }
}
