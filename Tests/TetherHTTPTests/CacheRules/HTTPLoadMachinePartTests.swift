import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The load's decisions about a stored part (RFC 9111 §3.3, §3.4), event by event, without I/O: a range it holds is
/// served, a request for the whole asks for the rest with `If-Range`, the `206` that answers is combined, and anything
/// that does not make one representation is asked for again, whole.
@Suite("HTTPLoadMachine: stored parts, event by event, without I/O")
struct HTTPLoadMachinePartTests {
    typealias Base = HTTPLoadMachineTests
    typealias Cache = HTTPLoadMachineCacheTests

    /// Bytes 0-4 of a 10-byte representation with `ETag: "v1"`, stored `age` seconds ago with `max-age=60`.
    static func part(age: TimeInterval = 0) -> CacheEntry {
        var entry = Base.entry(
            ["ETag": "\"v1\"", "Cache-Control": "max-age=60", "Content-Range": "bytes 0-4/10"],
            age: age
        )
        entry.statusCode = 206
        entry.body = Data("01234".utf8)
        return entry
    }

    static let completing = "send GET http://example.test/notes Range: bytes=5- If-Range: \"v1\""

    @Test("A fresh part serves a range it holds; a stale one is revalidated for it")
    func rangesThePartHolds() {
        let inside = Cache.request(headers: ["Range": "bytes=1-3"])
        #expect(Cache.start(inside, stored: Self.part()).1 == "serve 206 01234")
        #expect(
            Cache.start(inside, stored: Self.part(age: 120)).1
                == "send GET http://example.test/notes If-None-Match: \"v1\""
        )
    }

    @Test(
        "A range the part lacks, a HEAD, a reload or a request of its own conditions goes out as if nothing were stored",
        arguments: [
            Cache.request(headers: ["Range": "bytes=3-6"]), Cache.request(method: "HEAD"),
            Cache.request(policy: .reloadIgnoringLocalCacheData), Cache.request(headers: ["If-None-Match": "\"v0\""]),
            Cache.request(headers: ["Cache-Control": "no-store"]),
        ]
    )
    func requestsThePartCannotServe(request: URLRequest) {
        let action = Cache.start(request, stored: Self.part()).1
        #expect(action.hasPrefix("send \(HTTPLoad.method(of: request)) http://example.test/notes"))
        #expect(!action.contains("Range:"))
        #expect(!action.contains("If-None-Match: \"v1\""))
    }

    @Test("Offline, a part answers only a range it holds")
    func offline() {
        let whole = Cache.request(policy: .returnCacheDataDontLoad)
        #expect(Cache.start(whole, stored: Self.part()).1 == "fail \(URLError.Code.resourceUnavailable.rawValue)")
        let inside = Cache.request(policy: .returnCacheDataDontLoad, headers: ["Range": "bytes=0-1"])
        #expect(Cache.start(inside, stored: Self.part()).1 == "serve 206 01234")
    }

    @Test("A request for the whole asks for the rest with If-Range, and the 206 is combined and served")
    func completion() {
        var machine: HTTPLoadMachine
        let action: String
        (machine, action) = Cache.start(Cache.request(), stored: Self.part(age: 120))
        #expect(action == Self.completing)
        #expect(Base.received(&machine, 206, ["Content-Range": "bytes 5-9/10"]) == "complete the part bytes 0-4/10")
        var whole = Self.part()
        whole.statusCode = 200
        whole.body = Data("0123456789".utf8)
        #expect(Base.describe(machine.combined(whole)) == "serve revalidated, ETag \"v1\"")
    }

    @Test(
        "When the answer does not complete the part, the whole is asked for again without a range",
        arguments: [(206, true), (416, false)]
    )
    func completionThatFails(status: Int, isRead: Bool) {
        var machine: HTTPLoadMachine
        let action: String
        (machine, action) = Cache.start(Cache.request(), stored: Self.part())
        #expect(action == Self.completing)
        var next = Base.received(&machine, status, ["ETag": "\"v2\""])
        if isRead { next = Base.describe(machine.combined(nil)) }
        #expect(next == "send GET http://example.test/notes")
        #expect(Base.received(&machine, 206, ["ETag": "\"v2\""]) == "deliver the response to http://example.test/notes")
    }

    @Test("A 200 to the request for the rest is the whole, delivered; so is an error")
    func wholeAnswers() {
        for status in [200, 404, 500] {
            var (machine, _) = Cache.start(Cache.request(), stored: Self.part())
            #expect(Base.received(&machine, status) == "deliver the response to http://example.test/notes")
        }
    }
}
