import Foundation

@testable import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs tests of the suite against an origin (``CacheTestsOrigin`` or the suite's own) as the suite's client does
/// (test-engine/client/test.mjs), with `URLConnection` and a fresh ``HTTPResponseCache`` per test in place of a
/// browser: the test's configuration goes to the origin, its requests through the cache one after the other, then
/// the origin's record of them is checked.
///
/// Against the in-process origin, time is virtual: each test has a ``ManualHTTPCacheClock`` that its cache and the
/// origin (for `Date`, `Last-Modified` and the other date headers) both read, and the suite's pauses move it
/// forward instead of waiting. Before a pause and before the origin's record is read, the runner waits for the
/// cache's background revalidations to end, as the suite's three real seconds let them.
struct CacheTestRunner: Sendable {
    /// The origin's base URL, without a trailing slash.
    var baseURL: String
    /// The in-process origin, whose clock the runner sets per test; nil for another origin (then in real time).
    var origin: CacheTestsOrigin?
    /// The suite's passage of time after a request with `pause_after` (its client waits three seconds).
    var pause: Duration = .seconds(3)
    /// The suite client's request timeout.
    var requestTimeout: TimeInterval = 10

    /// The outcome of one test: nil when it passed.
    func run(_ test: CacheTestCatalog.Test) async -> CacheTestFailure? {
        let uuid = UUID().uuidString.lowercased()
        let clock = self.origin.map { _ in ManualHTTPCacheClock() }
        let cache = HTTPResponseCache(
            memoryCapacity: 1 << 20,
            isPrivate: true,
            clock: clock ?? SystemHTTPCacheClock()
        )
        let configuration = URLConnection.Configuration(responseCache: cache)
        if let clock { self.origin?.state.setClock(clock, for: uuid) }
        do {
            try await self.putConfig(test, uuid: uuid)
            var responses: [CacheTestChecks.Response] = []
            for (index, config) in test.requests.enumerated() {
                let request = self.urlRequest(test, index: index, uuid: uuid, previous: responses.last)
                let received: CacheTestLoad.Received
                do {
                    received = try await CacheTestLoad.run(
                        request,
                        configuration: configuration,
                        followsRedirects: config["redirect"]?.string != "manual"
                    )
                } catch {
                    // `fetch` rejects a failed load with a TypeError; the suite records it so.
                    throw CacheTestFailure(kind: "TypeError", message: "fetch failed (\(Self.describe(error)))")
                }
                let response = CacheTestChecks.Response(received)
                responses.append(response)
                try CacheTestChecks.checkResponse(response, requests: test.requests, index: index, uuid: uuid)
                if config.pauseAfter {
                    await cache.backgroundRevalidationsEnded()
                    if let clock { clock.advance(by: self.pause) } else { try await Task.sleep(for: self.pause) }
                }
            }
            await cache.backgroundRevalidationsEnded()
            let records = try await self.serverState(uuid: uuid)
            try CacheTestChecks.checkServerRequests(requests: test.requests, responses: responses, records: records)
            return nil
        } catch let failure as CacheTestFailure {
            return failure
        } catch {
            return CacheTestFailure(kind: "Error", message: Self.describe(error))
        }
    }

    /// The request as the suite's `fetching.init` makes it (the browser's form: no cache-busting headers), with
    /// `Test-Name`, `Test-ID` and `Req-Num`. A `fetch` cache mode becomes the cache policy that means the same
    /// (`no-cache`: `reloadRevalidatingCacheData`) plus the request headers `fetch` adds for it.
    private func urlRequest(
        _ test: CacheTestCatalog.Test,
        index: Int,
        uuid: String,
        previous: CacheTestChecks.Response?
    ) -> URLRequest {
        let config = test.requests[index]
        var path = "\(self.baseURL)/test/\(uuid)"
        if let filename = config["filename"]?.string { path += "/\(filename)" }
        if let query = config["query_arg"]?.string { path += "?\(query)" }
        var request = URLRequest(url: URL(string: path)!, timeoutInterval: self.requestTimeout)
        request.httpMethod = config.method
        request.httpShouldHandleCookies = false
        switch config["cache"]?.string {
        case "no-cache": request.cachePolicy = .reloadRevalidatingCacheData
        case "no-store", "reload": request.cachePolicy = .reloadIgnoringLocalCacheData
        case "force-cache": request.cachePolicy = .returnCacheDataElseLoad
        case "only-if-cached": request.cachePolicy = .returnCacheDataDontLoad
        default: request.cachePolicy = .useProtocolCachePolicy
        }
        for header in config.requestHeaders {
            var value = header.value
            if config["magic_ims"]?.bool == true, header.name.lowercased() == "if-modified-since" {
                value = CacheTestHeaderFixup.fixup(
                    name: header.name,
                    value: value,
                    serverNow: previous?.header("Server-Now"),
                    baseURL: previous?.header("Server-Base-Url"),
                    request: config
                )
            }
            request.addValue(value.text, forHTTPHeaderField: header.name)
        }
        // What `fetch` adds for its cache modes (Fetch, HTTP-network-or-cache fetch, step 8.19-20).
        let mode = config["cache"]?.string
        if mode == "no-cache", request.value(forHTTPHeaderField: "Cache-Control") == nil {
            request.setValue("max-age=0", forHTTPHeaderField: "Cache-Control")
        }
        if mode == "no-store" || mode == "reload" {
            if request.value(forHTTPHeaderField: "Pragma") == nil {
                request.setValue("no-cache", forHTTPHeaderField: "Pragma")
            }
            if request.value(forHTTPHeaderField: "Cache-Control") == nil {
                request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
            }
        }
        request.setValue(test.name, forHTTPHeaderField: "Test-Name")
        if let body = config["request_body"] { request.httpBody = Data(body.text.utf8) }
        request.setValue(test.id, forHTTPHeaderField: "Test-ID")
        request.setValue(String(index + 1), forHTTPHeaderField: "Req-Num")
        return request
    }

    private func putConfig(_ test: CacheTestCatalog.Test, uuid: String) async throws {
        // `inflateRequests`: every request carries the test's name and id.
        let requests = test.requests.map { request -> CacheTestJSON in
            guard case .object(var members) = request.json else { return request.json }
            members["name"] = .string(test.name)
            members["id"] = .string(test.id)
            return .object(members)
        }
        var request = URLRequest(url: URL(string: "\(self.baseURL)/config/\(uuid)")!, timeoutInterval: 10)
        request.httpMethod = "PUT"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(requests)
        let (_, response) = try await URLConnection.data(for: request, configuration: .init(responseCache: nil))
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        try CacheTestFailure.check(true, status == 201, "PUT config resulted in \(status)")
    }

    private func serverState(uuid: String) async throws -> [CacheTestJSON] {
        let request = URLRequest(url: URL(string: "\(self.baseURL)/state/\(uuid)")!, timeoutInterval: 10)
        let (data, response) = try await URLConnection.data(for: request, configuration: .init(responseCache: nil))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { return [] }
        return try JSONDecoder().decode([CacheTestJSON].self, from: data)
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? URLError { return "URLError \(error.code.rawValue)" }
        return String(describing: error)
    }
}
