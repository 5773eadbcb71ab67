import Foundation
import Testing

/// The HTTP caching test suite behind the published browser results (`http-tests/cache-tests`, exported in
/// `Tests/Data/cache-tests`), replayed through `URLConnection` and `HTTPResponseCache` against the suite's origin
/// ported to NIO (``CacheTestsOrigin``): the 300 tests that apply to a private cache, up to 64 at a time, on virtual
/// time (each test's cache and the origin share a ``ManualHTTPCacheClock`` that the suite's pauses move), so that a
/// slow or busy machine gets the same results as a fast one.
///
/// Every test that passes in the committed baseline (`Tests/Data/cache-tests/tether-results.json`) must still pass,
/// the first time: no test is run twice. `TETHER_CACHE_TESTS_WRITE=<file>` writes this run's results there (the
/// baseline's format) and `TETHER_CACHE_TESTS_REPORT=<file>` the Markdown report (`CACHE-TESTS.md`);
/// `TETHER_CACHE_TESTS_ORIGIN=<url>` runs against another origin, such as the suite's own (`npm run server`), in
/// real time.
@Suite("Cache conformance: http-tests/cache-tests against HTTPResponseCache", .timeLimit(.minutes(3)))
struct CacheConformanceTests {
    /// Tests in flight at once: the shared engine's connections per host.
    static let concurrency = 64

    @Test("Every private-cache test that passes in the baseline still passes")
    func privateCacheTestsKeepPassing() async throws {
        let catalog = try CacheTestCatalog.load()
        let tests = catalog.privateCacheTests
        #expect(tests.count == 300)
        let environment = ProcessInfo.processInfo.environment
        let origin = environment["TETHER_CACHE_TESTS_ORIGIN"] == nil ? try await CacheTestsOrigin.start() : nil
        let runner = CacheTestRunner(
            baseURL: environment["TETHER_CACHE_TESTS_ORIGIN"] ?? origin!.baseURL,
            origin: origin
        )
        let started = ContinuousClock.now
        let outcomes = await Self.run(tests, runner: runner)

        let baselineURL = CacheTestCatalog.dataDirectory.appendingPathComponent("tether-results.json")
        let baseline = try? CacheTestResults.load(from: baselineURL)
        var regressions: [(String, CacheTestFailure)] = []
        for id in (baseline?.passed ?? []).sorted() {
            if let failure = outcomes[id] ?? nil { regressions.append((id, failure)) }
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
        for (id, failure) in regressions {
            Issue.record("\(id) passed in the baseline, now fails: \(failure.kind): \(failure.message)")
        }
    }

    /// Runs `tests`, ``concurrency`` at a time, and returns each one's outcome by id.
    static func run(_ tests: [CacheTestCatalog.Test], runner: CacheTestRunner) async -> [String: CacheTestFailure?] {
        await withTaskGroup(of: (String, CacheTestFailure?).self) { group in
            var pending = tests[...]
            for _ in 0..<Self.concurrency {
                guard let test = pending.popFirst() else { break }
                group.addTask { (test.id, await runner.run(test)) }
            }
            var outcomes: [String: CacheTestFailure?] = [:]
            while let (id, failure) = await group.next() {
                outcomes[id] = .some(failure)
                if let test = pending.popFirst() {
                    group.addTask { (test.id, await runner.run(test)) }
                }
            }
            return outcomes
        }
    }
}
