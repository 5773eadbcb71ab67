import Foundation
import NIOHTTP1
import Testing
import TetherConcurrency

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Partial responses end to end, through `URLConnection` against an origin on loopback that serves byte ranges: a
/// `206` is stored and answers the ranges it holds, a stored part is completed with `If-Range`, two parts that meet
/// make the whole, and a changed representation is never spliced onto a stored part.
struct HTTPResponseCachePartTests {
    /// What the origin serves: a body with its entity tag, by one byte range (`bytes=a-b`, `a-`, `-n`) when asked,
    /// honouring `If-Range` unless it ignores it.
    struct Representation: Sendable {
        var body: String
        var etag: String
        var ignoresIfRange = false
    }

    static func answer(_ request: ScriptedOrigin.Request, _ representation: Representation) -> ScriptedOrigin.Response {
        let bytes = Array(representation.body.utf8)
        var headers = [("ETag", representation.etag), ("Cache-Control", "max-age=600"), ("Accept-Ranges", "bytes")]
        let ifRange = request.headers.first(name: "If-Range")
        guard let range = request.headers.first(name: "Range"), range.hasPrefix("bytes="),
            representation.ignoresIfRange || ifRange == nil || ifRange == representation.etag
        else { return .init(200, headers, body: bytes) }
        let spec = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        let first = spec[0] ?? max(0, bytes.count - (spec[1] ?? 0))
        let last = spec[0] == nil ? bytes.count - 1 : min(spec[1] ?? bytes.count - 1, bytes.count - 1)
        guard first < bytes.count else { return .init(416, headers + [("Content-Range", "bytes */\(bytes.count)")]) }
        headers.append(("Content-Range", "bytes \(first)-\(last)/\(bytes.count)"))
        return .init(206, headers, body: Array(bytes[first...last]))
    }

    /// Runs `body` with an origin serving `representation` (which the test may change) and a configuration whose cache
    /// is empty.
    func withOrigin(
        _ representation: Representation,
        _ body: (ScriptedOrigin, LockedBox<Representation>, URLConnection.Configuration) async throws -> Void
    ) async throws {
        let served = LockedBox(representation)
        let configuration = URLConnection.Configuration(responseCache: HTTPResponseCache(clock: ManualHTTPCacheClock()))
        let respond: @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response = { request in
            Self.answer(request, served.withLock { $0 })
        }
        try await withScriptedOrigin(respond) { origin in try await body(origin, served, configuration) }
    }

    func load(
        _ url: URL,
        range: String? = nil,
        configuration: URLConnection.Configuration
    ) async throws -> (body: String, response: HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.setValue(range, forHTTPHeaderField: "Range")
        let (data, response) = try await URLConnection.data(for: request, configuration: configuration)
        return (String(decoding: data, as: UTF8.self), try #require(response as? HTTPURLResponse))
    }

    @Test func aPartIsStoredAndAnswersTheRangesItHolds() async throws {
        try await self.withOrigin(Representation(body: "0123456789", etag: "\"v1\"")) { origin, _, configuration in
            let first = try await self.load(origin.url("/p"), range: "bytes=0-4", configuration: configuration)
            #expect(first.response.statusCode == 206)
            #expect(first.body == "01234")
            let inside = try await self.load(origin.url("/p"), range: "bytes=1-3", configuration: configuration)
            #expect(inside.response.statusCode == 206)
            #expect(inside.body == "123")
            #expect(inside.response.value(forHTTPHeaderField: "Content-Range") == "bytes 1-3/10")
            #expect(inside.response.value(forHTTPHeaderField: "Age") != nil)
            #expect(origin.requests(to: "/p").count == 1)
            let outside = try await self.load(origin.url("/p"), range: "bytes=3-6", configuration: configuration)
            #expect(outside.body == "3456")
            #expect(origin.requests(to: "/p").count == 2)
        }
    }

    @Test func aStoredPartIsCompletedWithIfRangeAndThenServesTheWhole() async throws {
        try await self.withOrigin(Representation(body: "0123456789", etag: "\"v1\"")) { origin, _, configuration in
            _ = try await self.load(origin.url("/c"), range: "bytes=0-4", configuration: configuration)
            let whole = try await self.load(origin.url("/c"), configuration: configuration)
            #expect(whole.response.statusCode == 200)
            #expect(whole.body == "0123456789")
            #expect(whole.response.value(forHTTPHeaderField: "Content-Range") == nil)
            let sent = try #require(origin.requests(to: "/c").last)
            #expect(sent.headers.first(name: "Range") == "bytes=5-")
            #expect(sent.headers.first(name: "If-Range") == "\"v1\"")
            let again = try await self.load(origin.url("/c"), configuration: configuration)
            #expect(again.body == "0123456789")
            #expect(origin.requests(to: "/c").count == 2)
        }
    }

    @Test func twoPartsThatMeetMakeTheWholeResponse() async throws {
        try await self.withOrigin(Representation(body: "0123456789", etag: "\"v1\"")) { origin, _, configuration in
            _ = try await self.load(origin.url("/m"), range: "bytes=5-", configuration: configuration)
            _ = try await self.load(origin.url("/m"), range: "bytes=0-4", configuration: configuration)
            let whole = try await self.load(origin.url("/m"), configuration: configuration)
            #expect(whole.response.statusCode == 200)
            #expect(whole.body == "0123456789")
            #expect(origin.requests(to: "/m").count == 2)
        }
    }

    @Test(arguments: [false, true])
    func aChangedRepresentationIsNeverSplicedOntoAStoredPart(originIgnoresIfRange: Bool) async throws {
        try await self.withOrigin(Representation(body: "0123456789", etag: "\"v1\"")) { origin, served, configuration in
            _ = try await self.load(origin.url("/v"), range: "bytes=0-4", configuration: configuration)
            served.withLock {
                $0 = Representation(body: "abcdefghij", etag: "\"v2\"", ignoresIfRange: originIgnoresIfRange)
            }
            let whole = try await self.load(origin.url("/v"), configuration: configuration)
            #expect(whole.response.statusCode == 200)
            #expect(whole.body == "abcdefghij")
            #expect(whole.response.value(forHTTPHeaderField: "ETag") == "\"v2\"")
            // An origin that ignores If-Range answers the range with the new version: it is read off and the whole
            // asked for again.
            #expect(origin.requests(to: "/v").count == (originIgnoresIfRange ? 3 : 2))
            let lastRange = origin.requests(to: "/v").last?.headers.first(name: "Range")
            #expect(lastRange == (originIgnoresIfRange ? nil : "bytes=5-"))
            let again = try await self.load(origin.url("/v"), range: "bytes=3-6", configuration: configuration)
            #expect(again.body == "defg")
        }
    }

    @Test func aShorterRepresentationIsAskedForWhole() async throws {
        try await self.withOrigin(Representation(body: "0123456789", etag: "\"v1\"")) { origin, served, configuration in
            _ = try await self.load(origin.url("/s"), range: "bytes=0-4", configuration: configuration)
            served.withLock { $0 = Representation(body: "abc", etag: "\"v2\"", ignoresIfRange: true) }
            let whole = try await self.load(origin.url("/s"), configuration: configuration)
            #expect(whole.response.statusCode == 200)
            #expect(whole.body == "abc")
            let ranges = origin.requests(to: "/s").map { $0.headers.first(name: "Range") }
            #expect(ranges == ["bytes=0-4", "bytes=5-", nil])
        }
    }

    @Test func aPartOnDiskIsFoundAgainAndCompletedByALaterCache() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-parts-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualHTTPCacheClock()
        let makeConfiguration = {
            let cache = HTTPResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory, clock: clock)
            return URLConnection.Configuration(responseCache: cache)
        }
        try await self.withOrigin(Representation(body: "0123456789", etag: "\"v1\"")) { origin, _, _ in
            _ = try await self.load(origin.url("/d"), range: "bytes=0-4", configuration: makeConfiguration())
            let whole = try await self.load(origin.url("/d"), configuration: makeConfiguration())
            #expect(whole.body == "0123456789")
            #expect(origin.requests(to: "/d").last?.headers.first(name: "Range") == "bytes=5-")
            let again = try await self.load(origin.url("/d"), range: "bytes=7-", configuration: makeConfiguration())
            #expect(again.body == "789")
            #expect(origin.requests(to: "/d").count == 2)
        }
    }

    @Test func aPartWithoutAStrongValidatorIsNotStored() async throws {
        try await self.withOrigin(Representation(body: "0123456789", etag: "W/\"v1\"")) { origin, _, configuration in
            _ = try await self.load(origin.url("/w"), range: "bytes=0-4", configuration: configuration)
            let second = try await self.load(origin.url("/w"), range: "bytes=0-4", configuration: configuration)
            #expect(second.body == "01234")
            #expect(origin.requests(to: "/w").count == 2)
            _ = try await self.load(origin.url("/w"), configuration: configuration)
            #expect(origin.requests(to: "/w").last?.headers.first(name: "Range") == nil)
        }
    }
}
