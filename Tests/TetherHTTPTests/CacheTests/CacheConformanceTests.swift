import Foundation
import Testing

/// The HTTP caching test suite behind the published browser results (`http-tests/cache-tests`, exported in
/// `Tests/Data/cache-tests`), replayed through `URLConnection` and `HTTPResponseCache` against the suite's origin
/// ported to NIO (``CacheTestsOrigin``): the 300 tests that apply to a private cache, all at once.
///
/// Every test that passes in the committed baseline (`Tests/Data/cache-tests/tether-results.json`) must still pass.
/// `TETHER_CACHE_TESTS_WRITE=<file>` writes this run's results there (the baseline's format) and
/// `TETHER_CACHE_TESTS_REPORT=<file>` the Markdown report (`CACHE-TESTS.md`); `TETHER_CACHE_TESTS_ORIGIN=<url>` runs
/// against another origin, such as the suite's own (`npm run server`).
@Suite("Cache conformance: http-tests/cache-tests against HTTPResponseCache", .timeLimit(.minutes(3)))
struct CacheConformanceTests {
    @Test("Every private-cache test that passes in the baseline still passes")
    func privateCacheTestsKeepPassing() async throws {
        let catalog = try CacheTestCatalog.load()
        let tests = catalog.privateCacheTests
        #expect(tests.count == 300)
        let environment = ProcessInfo.processInfo.environment
        let origin = environment["TETHER_CACHE_TESTS_ORIGIN"] == nil ? try await CacheTestsOrigin.start() : nil
        let runner = CacheTestRunner(baseURL: environment["TETHER_CACHE_TESTS_ORIGIN"] ?? origin!.baseURL)
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: (String, CacheTestFailure?).self) { group in
            for test in tests {
                group.addTask { (test.id, await runner.run(test)) }
            }
            var outcomes: [String: CacheTestFailure?] = [:]
            for await (id, failure) in group { outcomes[id] = .some(failure) }
            return outcomes
        }
        await origin?.stop()
        let results = CacheTestResults(outcomes: outcomes)
        print("cache-tests: \(results.passed.count) of \(tests.count) pass (\(ContinuousClock.now - started))")

        if let path = environment["TETHER_CACHE_TESTS_WRITE"] {
            try results.json().write(to: URL(fileURLWithPath: path))
        }
        if let path = environment["TETHER_CACHE_TESTS_REPORT"] {
            let report = try CacheTestReport(catalog: catalog, results: results)
            try Data(report.markdown().utf8).write(to: URL(fileURLWithPath: path))
        }
        let baselineURL = CacheTestCatalog.dataDirectory.appendingPathComponent("tether-results.json")
        guard FileManager.default.fileExists(atPath: baselineURL.path) else { return }
        let baseline = try CacheTestResults.load(from: baselineURL)
        for id in baseline.passed.sorted() {
            if let failure = outcomes[id] ?? nil {
                Issue.record("\(id) passed in the baseline, now fails: \(failure.kind): \(failure.message)")
            }
        }
    }
}
