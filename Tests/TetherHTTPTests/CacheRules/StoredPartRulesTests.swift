import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Partial responses in the cache (RFC 9111 §3.3, §3.4), as tables without I/O: which `206` is stored, which bytes a
/// stored part holds, what it does for a request, how two parts combine, and that parts of two representations never
/// do.
struct StoredPartRulesTests {
    static let now = HeuristicFreshnessTests.now
    static let digits = "0123456789"

    /// A stored `206` of `Content-Range: bytes <range>/10` holding `body`, with `ETag: "v1"` unless told.
    static func part(
        _ range: String,
        _ body: String,
        etag: String? = "\"v1\"",
        extra: [String: String] = [:]
    ) -> CacheEntry {
        var headers = ["Content-Range": "bytes \(range)/10", "Cache-Control": "max-age=60"].merging(extra) { $1 }
        if let etag { headers["ETag"] = etag }
        var entry = HeuristicFreshnessTests.entry(status: 206, headers)
        entry.body = Data(body.utf8)
        return entry
    }

    /// A stored `200` of the ten digits with `ETag: "v1"` unless told.
    static func complete(etag: String = "\"v1\"") -> CacheEntry {
        var entry = HeuristicFreshnessTests.entry(["ETag": etag, "Cache-Control": "max-age=60"])
        entry.body = Data(Self.digits.utf8)
        return entry
    }

    static func request(_ headers: [String: String] = [:], method: String = "GET") -> URLRequest {
        var request = URLRequest(url: URL(string: "http://h.example/a")!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    @Test(
        "A stored part holds the range its Content-Range names, only when its body is exactly that long",
        arguments: [
            ("0-4", "01234", StoredPart(range: 0...4, length: 10)),
            ("5-9", "56789", StoredPart(range: 5...9, length: 10)),
            ("4-9", "01234", nil),  // the cache-tests suite's part: six bytes named, five sent
            ("0-4", "0123", nil), ("0-4", "012345", nil),
        ] as [(String, String, StoredPart?)]
    )
    func partsAndTheirBytes(range: String, body: String, expected: StoredPart?) {
        #expect(StoredPart(Self.part(range, body)) == expected)
    }

    @Test(
        "Content-Range values: one satisfied byte range of a known length",
        arguments: [
            ("bytes 0-4/10", StoredPart(range: 0...4, length: 10)),
            ("bytes 9-9/10", StoredPart(range: 9...9, length: 10)),
            ("bytes 0-4/*", nil), ("bytes */10", nil), ("bytes 5-4/10", nil), ("bytes 0-10/10", nil),
            ("items 0-4/10", nil), ("bytes 0-4", nil), ("bytes a-4/10", nil),
        ] as [(String, StoredPart?)]
    )
    func contentRanges(value: String, expected: StoredPart?) {
        #expect(StoredPart(contentRange: value) == expected)
    }

    @Test(
        "The strong validator: an entity tag unless weak, else a Last-Modified at least a second before the Date",
        arguments: [
            (["ETag": "\"v1\""], "\"v1\""), (["ETag": "W/\"v1\""], nil), (["ETag": "v1"], nil),
            (["ETag": "W/\"v1\"", "Last-Modified": HeuristicFreshnessTests.date(-60)], nil),
            (
                ["Last-Modified": HeuristicFreshnessTests.date(-60), "Date": HeuristicFreshnessTests.date(0)],
                HeuristicFreshnessTests.date(-60)
            ),
            (["Last-Modified": HeuristicFreshnessTests.date(0), "Date": HeuristicFreshnessTests.date(0)], nil),
            (["Last-Modified": HeuristicFreshnessTests.date(-60)], nil), ([:], nil),
        ] as [([String: String], String?)]
    )
    func strongValidators(headers: [String: String], expected: String?) {
        #expect(CacheRules.strongValidator(headers) == expected)
    }

    @Test(
        "A 206 is stored with a byte Content-Range of a known length, a strong validator and no content coding",
        arguments: [
            (["Content-Range": "bytes 0-4/10", "ETag": "\"v1\""], true),
            (["Content-Range": "bytes 0-4/10", "ETag": "\"v1\"", "Content-Length": "5"], true),
            (["Content-Range": "bytes 0-4/10", "ETag": "\"v1\"", "Content-Length": "4"], false),
            (["Content-Range": "bytes 0-4/10"], false),
            (["Content-Range": "bytes 0-4/10", "ETag": "W/\"v1\""], false),
            (["Content-Range": "bytes 0-4/*", "ETag": "\"v1\""], false), (["ETag": "\"v1\""], false),
            (["Content-Range": "bytes 0-4/10", "ETag": "\"v1\"", "Content-Encoding": "gzip"], false),
            (["Content-Range": "bytes 0-4/10", "ETag": "\"v1\"", "Cache-Control": "no-store"], false),
        ] as [([String: String], Bool)]
    )
    func storablePartialResponses(headers: [String: String], expected: Bool) {
        var headers = headers
        if headers["Cache-Control"] == nil { headers["Cache-Control"] = "max-age=60" }
        #expect(CacheRules.isStorable(request: Self.request(), statusCode: 206, headers: headers) == expected)
    }

    @Test(
        "What a stored part of bytes 0-4 does for a request",
        arguments: [
            (["Range": "bytes=1-3"], "GET", StoredPart.Use.answers),
            (["Range": "bytes=0-4"], "GET", .answers), (["Range": "bytes=-7"], "GET", .unused),
            (["Range": "bytes=3-"], "GET", .unused), (["Range": "bytes=4-5"], "GET", .unused),
            (["Range": "bytes=1-3", "If-Range": "\"v1\""], "GET", .answers),
            (["Range": "bytes=1-3", "If-Range": "\"v2\""], "GET", .unused),
            ([:], "GET", .completes(missing: 5...9, ifRange: "\"v1\"")), ([:], "HEAD", .unused),
            (["If-None-Match": "\"v1\""], "GET", .unused), (["Range": "bytes=1-3"], "HEAD", .unused),
        ] as [([String: String], String, StoredPart.Use)]
    )
    func usesOfAPartAtTheStart(headers: [String: String], method: String, expected: StoredPart.Use) {
        #expect(CacheRules.use(of: Self.part("0-4", "01234"), for: Self.request(headers, method: method)) == expected)
    }

    @Test("A part at the end completes with its start, one in the middle does not complete, and a 200 is no part")
    func usesOfOtherParts() {
        let end = Self.part("6-9", "6789")
        #expect(CacheRules.use(of: end, for: Self.request()) == .completes(missing: 0...5, ifRange: "\"v1\""))
        #expect(CacheRules.rangeFieldValue(0...5, length: 10) == "bytes=0-5")
        #expect(CacheRules.rangeFieldValue(5...9, length: 10) == "bytes=5-")
        #expect(CacheRules.use(of: Self.part("3-5", "345"), for: Self.request()) == .unused)
        #expect(CacheRules.use(of: Self.part("0-4", "01234", etag: nil), for: Self.request()) == .unused)
        #expect(CacheRules.use(of: Self.complete(), for: Self.request(["Range": "bytes=1-3"])) == .unused)
    }

    @Test("A part answers a range it holds with the right bytes and Content-Range, and no other")
    func rangesFromAPart() throws {
        let part = Self.part("4-8", "45678")
        let answer = try #require(CacheRules.partialResponse(part, range: "bytes=6-7"))
        #expect(answer.statusCode == 206)
        #expect(answer.body == Data("67".utf8))
        #expect(answer.header("Content-Range") == "bytes 6-7/10")
        #expect(answer.header("Content-Length") == "2")
        #expect(CacheRules.partialResponse(part, range: "bytes=4-9") == nil)
        #expect(CacheRules.partialResponse(part, range: "bytes=-1") == nil)
        #expect(CacheRules.answer(part, to: Self.request(["Range": "bytes=5-6"])).body == Data("56".utf8))
    }

    @Test("If-Range decides whether a complete entry answers a range, or whole")
    func ifRangeOnAComplete() {
        let entry = Self.complete()
        let matching = Self.request(["Range": "bytes=1-2", "If-Range": "\"v1\""])
        #expect(CacheRules.answer(entry, to: matching).body == Data("12".utf8))
        let other = Self.request(["Range": "bytes=1-2", "If-Range": "\"v0\""])
        #expect(CacheRules.answer(entry, to: other).statusCode == 200)
        #expect(CacheRules.answer(entry, to: Self.request(["Range": "bytes=1-2"], method: "HEAD")).statusCode == 200)
    }

    @Test(
        "Two parts of one representation combine when they meet or overlap; the new headers win",
        arguments: [
            (("0-4", "01234"), ("5-9", "56789"), "0123456789", nil),
            (("5-9", "56789"), ("0-4", "01234"), "0123456789", nil),
            (("0-5", "012345"), ("3-9", "3456789"), "0123456789", nil),
            (("0-2", "012"), ("3-5", "345"), "012345", "bytes 0-5/10"),
            (("2-8", "2345678"), ("4-5", "45"), "2345678", "bytes 2-8/10"),
            (("4-5", "45"), ("2-8", "2345678"), "2345678", "bytes 2-8/10"),
        ] as [((String, String), (String, String), String, String?)]
    )
    func combiningParts(stored: (String, String), new: (String, String), body: String, contentRange: String?) throws {
        let combined = try #require(
            CacheRules.combine(
                Self.part(stored.0, stored.1, extra: ["A": "old", "B": "kept"]),
                with: Self.part(new.0, new.1, extra: ["A": "new"])
            )
        )
        #expect(combined.statusCode == (contentRange == nil ? 200 : 206))
        #expect(String(decoding: combined.body, as: UTF8.self) == body)
        #expect(combined.header("Content-Range") == contentRange)
        #expect(combined.header("Content-Length") == String(body.count))
        #expect(combined.header("A") == "new")
        #expect(combined.header("B") == "kept")
    }

    /// Pairs of a stored response and a new part that must not combine, by what differs.
    static let strangers: [String: (CacheEntry, CacheEntry)] = [
        "another entity tag": (Self.part("0-4", "01234"), Self.part("5-9", "56789", etag: "\"v2\"")),
        "weak entity tags": (Self.part("0-4", "01234", etag: "W/\"v1\""), Self.part("5-9", "56789", etag: "W/\"v1\"")),
        "no validators": (Self.part("0-4", "01234", etag: nil), Self.part("5-9", "56789", etag: nil)),
        "a gap between them": (Self.part("0-2", "012"), Self.part("5-9", "56789")),
        "a content coding": (Self.part("0-4", "01234"), Self.part("5-9", "56789", extra: ["Content-Encoding": "gzip"])),
        "a complete entry of another version": (Self.complete(etag: "\"v2\""), Self.part("5-9", "56789")),
    ]

    @Test(
        "Parts of two representations, or of unknown ones, never combine",
        arguments: StoredPartRulesTests.strangers.keys.sorted()
    )
    func partsThatDoNotCombine(difference: String) throws {
        let (stored, new) = try #require(Self.strangers[difference])
        #expect(CacheRules.combine(stored, with: new) == nil)
    }

    @Test("A part of another length does not combine, and a part confirming a complete entry refreshes its headers")
    func lengthsAndCompleteEntries() throws {
        var longer = Self.part("5-9", "56789")
        longer.headers["Content-Range"] = "bytes 5-9/11"
        #expect(CacheRules.combine(Self.part("0-4", "01234"), with: longer) == nil)
        let refreshed = try #require(
            CacheRules.combine(Self.complete(), with: Self.part("2-3", "23", extra: ["Cache-Control": "max-age=900"]))
        )
        #expect(refreshed.statusCode == 200)
        #expect(refreshed.body == Data(Self.digits.utf8))
        #expect(refreshed.header("Cache-Control") == "max-age=900")
        #expect(refreshed.header("Content-Range") == nil)
        #expect(CacheRules.completed(Self.part("0-9", Self.digits)).statusCode == 200)
    }
}
