import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The load's cache decisions beyond the policy table of ``HTTPLoadMachineTests``: heuristic freshness and its
/// switch, a request's `no-store`, `immutable` on a reload, the entity tags of other variants and the 304 that
/// selects one, a `HEAD` answered from and freshening the stored `GET`, and `stale-if-error` on a server error.
@Suite("HTTPLoadMachine: cache decisions, event by event, without I/O")
struct HTTPLoadMachineCacheTests {
    typealias Base = HTTPLoadMachineTests

    static func request(
        method: String = "GET",
        policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
        headers: [String: String] = [:]
    ) -> URLRequest {
        var request = Base.request(policy: policy)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    static func start(
        _ request: URLRequest,
        stored: CacheEntry?,
        variants: [CacheEntry] = [],
        heuristics: Bool = true
    ) -> (HTTPLoadMachine, String) {
        var machine = HTTPLoadMachine(maximumRedirects: 5, usesHeuristicFreshness: heuristics)
        let action = machine.start(request, stored: stored, variants: variants, now: Base.now)
        return (machine, Base.describe(action))
    }

    static let lastModifiedADayBefore = [
        "Date": HeuristicFreshnessTests.date(-3_600),
        "Last-Modified": HeuristicFreshnessTests.date(-3_600 - 86_400),
    ]

    @Test("A response fresh on a heuristic is served, unless heuristic freshness is turned off")
    func heuristicFreshnessAndItsSwitch() {
        let entry = Base.entry(Self.lastModifiedADayBefore, age: 3_600)
        #expect(Self.start(Self.request(), stored: entry).1 == "serve 200 stored")
        let lastModified = Self.lastModifiedADayBefore["Last-Modified"]!
        #expect(
            Self.start(Self.request(), stored: entry, heuristics: false).1
                == "send GET http://example.test/notes If-Modified-Since: \(lastModified)"
        )
        let aged = Base.entry(Self.lastModifiedADayBefore, age: 3_600 + 8_640)
        #expect(Self.start(Self.request(), stored: aged).1.hasPrefix("send GET"))
    }

    @Test("A request with Cache-Control: no-store is not answered from the cache, nor revalidates it")
    func requestNoStore() {
        let fresh = Base.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=600"])
        let request = Self.request(headers: ["Cache-Control": "no-store"])
        #expect(Self.start(request, stored: fresh, variants: [fresh]).1 == "send GET http://example.test/notes")
    }

    @Test("A reload serves a fresh immutable response and revalidates a stale one")
    func immutableOnAReload() {
        let reload = Self.request(policy: .reloadRevalidatingCacheData, headers: ["Cache-Control": "max-age=0"])
        let fresh = Base.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=600, immutable"], age: 10)
        let stale = Base.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=600, immutable"], age: 700)
        #expect(Self.start(reload, stored: fresh).1 == "serve 200 stored")
        #expect(Self.start(reload, stored: stale).1 == "send GET http://example.test/notes If-None-Match: \"v1\"")
        let forced = Self.request(policy: .reloadIgnoringLocalCacheData)
        #expect(Self.start(forced, stored: fresh).1 == "send GET http://example.test/notes")
    }

    @Test("Without a matching variant, the others' entity tags go out, and a 304 selects the one it names")
    func otherVariantsValidate() {
        var first = Base.entry(["ETag": "\"a\"", "Vary": "Foo", "Cache-Control": "max-age=600"])
        first.varyValues = ["foo": "1"]
        var second = Base.entry(["ETag": "\"b\"", "Vary": "Foo", "Cache-Control": "max-age=600"])
        second.varyValues = ["foo": "2"]
        var machine: HTTPLoadMachine
        let action: String
        (machine, action) = Self.start(Self.request(), stored: nil, variants: [first, second])
        #expect(action == "send GET http://example.test/notes If-None-Match: \"a\", \"b\"")
        #expect(Base.received(&machine, 304, ["ETag": "\"b\""]) == "serve revalidated, ETag \"b\"")
        (machine, _) = Self.start(Self.request(), stored: nil, variants: [first, second])
        #expect(Base.received(&machine, 304, ["ETag": "\"c\""]) == "deliver the response to http://example.test/notes")
        // The application's own condition is left alone.
        let own = Self.request(headers: ["If-None-Match": "\"z\""])
        #expect(Self.start(own, stored: nil, variants: [first]).1 == "send GET http://example.test/notes")
    }

    @Test("A variant that varies on a credential never offers its entity tag to another request")
    func credentialVariantsKeepTheirTags() {
        for name in ["Cookie", "Authorization", "Proxy-Authorization", "Foo, cookie"] {
            var entry = Base.entry(["ETag": "\"a\"", "Vary": name, "Cache-Control": "max-age=600"])
            entry.varyValues = ["cookie": "sha256:00"]
            let action = Self.start(Self.request(), stored: nil, variants: [entry]).1
            #expect(action == "send GET http://example.test/notes")
        }
    }

    @Test("A HEAD is answered from a fresh GET response, and a 200 to it freshens a stale one it describes")
    func headAndTheStoredGET() {
        let fresh = Base.entry(["Cache-Control": "max-age=600", "Template-A": "1"], age: 10)
        #expect(Self.start(Self.request(method: "HEAD"), stored: fresh).1 == "serve 200 stored")
        let stale = Base.entry(["Cache-Control": "max-age=2", "Template-A": "1"], age: 10)
        var machine: HTTPLoadMachine
        let action: String
        (machine, action) = Self.start(Self.request(method: "HEAD"), stored: stale)
        #expect(action == "send HEAD http://example.test/notes")
        #expect(Base.received(&machine, 200, ["Cache-Control": "max-age=1000"]) == "serve revalidated, ETag -")
        (machine, _) = Self.start(Self.request(method: "HEAD"), stored: stale)
        #expect(
            Base.received(&machine, 200, ["ETag": "\"other\""])
                == "deliver the response to http://example.test/notes (revalidated)"
        )
        (machine, _) = Self.start(Self.request(method: "HEAD"), stored: stale)
        #expect(Base.received(&machine, 410, [:]) == "deliver the response to http://example.test/notes")
    }

    @Test("A server error is answered with the stale entry within its stale-if-error window only")
    func staleIfErrorOnAServerError() {
        let allows = Base.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=2, stale-if-error=60"], age: 10)
        var (machine, _) = Self.start(Self.request(), stored: allows)
        #expect(Base.received(&machine, 503) == "serve 200 stored")
        let silent = Base.entry(["ETag": "\"v1\"", "Cache-Control": "max-age=2"], age: 10)
        (machine, _) = Self.start(Self.request(), stored: silent)
        #expect(Base.received(&machine, 503) == "deliver the response to http://example.test/notes (revalidated)")
        (machine, _) = Self.start(Self.request(), stored: allows)
        #expect(Base.received(&machine, 404) == "deliver the response to http://example.test/notes (revalidated)")
    }
}
