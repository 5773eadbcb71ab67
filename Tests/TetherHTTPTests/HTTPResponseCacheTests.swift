import Foundation
import Testing

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct HTTPResponseCacheTests {
    let server: TestServer

    init() async throws {
        server = try await TestServer.http()
    }

    private func name() -> String { "n\(UUID().uuidString.prefix(8))" }

    private func fetch(
        _ path: String,
        cache: HTTPResponseCache,
        policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
        headers: [String: String] = [:]
    ) async throws -> (String, HTTPURLResponse) {
        var req = request(self.server.url(path))
        req.cachePolicy = policy
        for (name, value) in headers { req.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLConnection.data(for: req, configuration: .init(responseCache: cache))
        return (String(decoding: data, as: UTF8.self), response as! HTTPURLResponse)
    }

    @Test func aFreshHitDoesNotReachTheServer() async throws {
        let cache = HTTPResponseCache()
        let name = self.name()
        let first = try await self.fetch("/cache/\(name)?cc=max-age%3D60", cache: cache)
        let second = try await self.fetch("/cache/\(name)?cc=max-age%3D60", cache: cache)
        #expect(first.0 == "body \(name) #1")
        #expect(second.0 == first.0)
        #expect(second.1.statusCode == 200)
        #expect(try await self.server.counts()["200:\(name)"] == 1)
        #expect(cache.currentMemoryUsage > 0)
    }

    @Test func aStaleEntryIsRevalidatedWithA304() async throws {
        let cache = HTTPResponseCache()
        let name = self.name()
        let path = "/cache/\(name)?cc=max-age%3D0&etag=%22v1%22"
        _ = try await self.fetch(path, cache: cache)
        let second = try await self.fetch(path, cache: cache)
        #expect(second.0 == "body \(name) #1")
        #expect(second.1.statusCode == 200)
        let counts = try await self.server.counts()
        #expect(counts["200:\(name)"] == 1)
        #expect(counts["304:\(name)"] == 1)
    }

    @Test func noStoreIsNeverStored() async throws {
        let cache = HTTPResponseCache()
        let name = self.name()
        _ = try await self.fetch("/cache/\(name)?cc=no-store%2C%20max-age%3D60", cache: cache)
        let second = try await self.fetch("/cache/\(name)?cc=no-store%2C%20max-age%3D60", cache: cache)
        #expect(second.0 == "body \(name) #2")
        #expect(cache.currentMemoryUsage == 0)
    }

    @Test func varyHeadersAreMatched() async throws {
        let cache = HTTPResponseCache()
        let name = self.name()
        let path = "/cache/\(name)?cc=max-age%3D60&vary=X-Lang"
        _ = try await self.fetch(path, cache: cache, headers: ["X-Lang": "en"])
        let same = try await self.fetch(path, cache: cache, headers: ["X-Lang": "en"])
        let other = try await self.fetch(path, cache: cache, headers: ["X-Lang": "fr"])
        #expect(same.0 == "body \(name) #1")
        #expect(other.0 == "body \(name) #2")
    }

    @Test func returnCacheDataDontLoadServesStoredEntriesOrFails() async throws {
        let cache = HTTPResponseCache()
        let name = self.name()
        await expectURLError(.resourceUnavailable) {
            _ = try await self.fetch(
                "/cache/\(name)?cc=max-age%3D0&etag=x",
                cache: cache,
                policy: .returnCacheDataDontLoad
            )
        }
        _ = try await self.fetch("/cache/\(name)?cc=max-age%3D0&etag=x", cache: cache)
        let stale = try await self.fetch(
            "/cache/\(name)?cc=max-age%3D0&etag=x",
            cache: cache,
            policy: .returnCacheDataDontLoad
        )
        #expect(stale.0 == "body \(name) #1")
        let elseLoad = try await self.fetch(
            "/cache/\(name)?cc=max-age%3D0&etag=x",
            cache: cache,
            policy: .returnCacheDataElseLoad
        )
        #expect(elseLoad.0 == "body \(name) #1")
        #expect(try await self.server.counts()["path:/cache/\(name)"] == 1)
    }

    @Test func reloadPoliciesBypassButStoreAndRevalidatingAlwaysAsks() async throws {
        let cache = HTTPResponseCache()
        let name = self.name()
        let path = "/cache/\(name)?cc=max-age%3D60&etag=e1"
        _ = try await self.fetch(path, cache: cache)
        let reloaded = try await self.fetch(path, cache: cache, policy: .reloadIgnoringLocalCacheData)
        #expect(reloaded.0 == "body \(name) #2")
        let fromCache = try await self.fetch(path, cache: cache)
        #expect(fromCache.0 == "body \(name) #2")
        let revalidated = try await self.fetch(path, cache: cache, policy: .reloadRevalidatingCacheData)
        #expect(revalidated.0 == "body \(name) #2")
        let counts = try await self.server.counts()
        #expect(counts["200:\(name)"] == 2)
        #expect(counts["304:\(name)"] == 1)
    }

    @Test func willCacheResponseCanPreventStoring() async throws {
        let cache = HTTPResponseCache()
        let name = self.name()
        let delegate = RecordingDelegate()
        delegate.onWillCache = { _ in nil }
        try await load(
            request(self.server.url("/cache/\(name)?cc=max-age%3D60")),
            delegate: delegate,
            configuration: .init(responseCache: cache)
        )
        #expect(delegate.events.suffix(2) == [.willCache, .finished])
        #expect(cache.currentMemoryUsage == 0)
    }

    @Test func diskEntriesSurviveANewInstanceAndCorruptOnesAreMisses() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tether-cache-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let name = self.name()
        let path = "/cache/\(name)?cc=max-age%3D60"
        let first = HTTPResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        _ = try await self.fetch(path, cache: first)
        #expect(first.currentDiskUsage > 0)
        let second = HTTPResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        let hit = try await self.fetch(path, cache: second)
        #expect(hit.0 == "body \(name) #1")
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            try Data("garbage".utf8).write(to: directory.appendingPathComponent(file))
        }
        let third = HTTPResponseCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        #expect(third.cachedResponse(for: request(self.server.url(path))) == nil)
        #expect(third.currentDiskUsage == 0)
    }

    @Test func aFailedRevalidationServesTheStaleEntryUnlessItMustRevalidate() async throws {
        let url = URL(string: "http://127.0.0.1:\(try closedPort())/gone")!
        for mustRevalidate in [false, true] {
            let cache = HTTPResponseCache()
            let headers = [
                "Cache-Control": mustRevalidate ? "max-age=0, must-revalidate" : "max-age=0", "ETag": "\"z\"",
            ]
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers)!
            cache.storeCachedResponse(
                CachedURLResponse(response: response, data: Data("stale".utf8)),
                for: URLRequest(url: url)
            )
            if mustRevalidate {
                await expectURLError(.cannotConnectToHost) {
                    _ = try await URLConnection.data(for: request(url), configuration: .init(responseCache: cache))
                }
            } else {
                let (data, _) = try await URLConnection.data(
                    for: request(url),
                    configuration: .init(responseCache: cache)
                )
                #expect(data == Data("stale".utf8))
            }
        }
    }

    @Test func freshnessFollowsMaxAgeExpiresAndAge() {
        let now = Date()
        func entry(_ headers: [String: String]) -> CacheEntry {
            CacheEntry(
                url: URL(string: "http://h/")!,
                statusCode: 200,
                headers: headers,
                body: Data(),
                requestDate: now,
                responseDate: now,
                varyValues: [:],
                storagePolicy: 0
            )
        }
        #expect(CacheRules.isFresh(entry(["Cache-Control": "max-age=60"]), now: now))
        #expect(!CacheRules.isFresh(entry(["Cache-Control": "max-age=60", "Age": "61"]), now: now))
        #expect(!CacheRules.isFresh(entry(["Cache-Control": "max-age=60"]), now: now.addingTimeInterval(61)))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: now)
        let expires = formatter.string(from: now.addingTimeInterval(120))
        #expect(CacheRules.isFresh(entry(["Date": date, "Expires": expires]), now: now))
        #expect(!CacheRules.isFresh(entry(["Expires": "0"]), now: now))
        #expect(!CacheRules.isFresh(entry(["ETag": "x"]), now: now))
        var noCacheRequest = URLRequest(url: URL(string: "http://h/")!)
        noCacheRequest.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        let fresh = entry(["Cache-Control": "max-age=60"])
        #expect(
            CacheRules.canUseWithoutRevalidation(fresh, request: URLRequest(url: URL(string: "http://h/")!), now: now)
        )
        #expect(!CacheRules.canUseWithoutRevalidation(fresh, request: noCacheRequest, now: now))
        #expect(
            !CacheRules.canUseWithoutRevalidation(
                entry(["Cache-Control": "max-age=60, no-cache"]),
                request: URLRequest(url: URL(string: "http://h/")!),
                now: now
            )
        )
        let get = URLRequest(url: URL(string: "http://h/")!)
        #expect(CacheRules.isStorable(request: get, statusCode: 200, headers: ["ETag": "x"]))
        #expect(!CacheRules.isStorable(request: get, statusCode: 200, headers: [:]))
        // Any final status with explicit freshness is storable (RFC 9111 §3); on a validator alone, only the
        // heuristically cacheable ones.
        #expect(CacheRules.isStorable(request: get, statusCode: 201, headers: ["Cache-Control": "max-age=5"]))
        #expect(!CacheRules.isStorable(request: get, statusCode: 201, headers: ["ETag": "x"]))
        #expect(
            !CacheRules.isStorable(request: get, statusCode: 200, headers: ["Cache-Control": "max-age=5", "Vary": "*"])
        )
    }
}
