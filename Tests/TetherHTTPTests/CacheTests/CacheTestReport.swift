import Foundation

/// `CACHE-TESTS.md`: Tether's results next to the published browser results, and every failing test grouped by
/// its cause (``CacheTestCause``), with the suite's message and what the browsers do.
struct CacheTestReport {
    /// The suite's commit that `Tests/Data/cache-tests/tests.json` was exported from.
    static let suiteCommit = "b55b8bda3dbb8c927c04e85bd8d496a8caa3e4ba"

    let catalog: CacheTestCatalog
    let results: CacheTestResults
    /// The browsers' published results as the suite ships them (`Tests/Data/cache-tests/browsers`).
    let browsers: [(name: String, results: CacheTestResults)]

    init(catalog: CacheTestCatalog, results: CacheTestResults) throws {
        self.catalog = catalog
        self.results = results
        self.browsers = try ["Chrome", "Firefox", "Safari"].map { name in
            let url = CacheTestCatalog.dataDirectory.appendingPathComponent("browsers/\(name.lowercased()).json")
            return (name, try CacheTestResults.load(from: url))
        }
    }

    func markdown() -> String {
        let tests = self.catalog.privateCacheTests
        let failing = tests.filter { !self.results.passed.contains($0.id) }
        var text = """
            # Cache conformance: http-tests/cache-tests

            [`http-tests/cache-tests`](https://github.com/http-tests/cache-tests) is the HTTP caching test suite \
            behind the browser results published at [cache-tests.fyi](https://cache-tests.fyi). Tether runs the \
            \(tests.count) of its \(self.catalog.tests.count) tests that apply to a private cache (all but the \
            `cdn_only` and `browser_skip` ones: the browsers' selection) through `URLConnection` with a fresh \
            `HTTPResponseCache` per test, against the suite's origin server ported to SwiftNIO, in process on \
            127.0.0.1. The suite is exported at commit `\(Self.suiteCommit.prefix(12))`; the browser columns are \
            the results that commit publishes (Chrome 143, Firefox 146, Safari 26.2). A test counts as passed when \
            its result is `true`, as the published counts are made (a `check` that says yes counts; dependencies \
            are not applied).


            """
        text += self.summaryTable(tests)
        text += """

            Every test's result is in `Tests/Data/cache-tests/tether-results.json`, in the suite's own results \
            format (`true`, or the failure's kind and message), next to the browsers' results it was compared with.

            `CacheConformanceTests` (in `TetherHTTPTests`) runs them 64 at a time, on virtual time: each test's \
            cache and the origin share a `ManualHTTPCacheClock`, which the suite's three-second pauses (and its \
            one `response_pause`) move forward instead of waiting, and every date the origin writes comes from it. \
            A run takes a few seconds and gives the same results on a fast machine, a busy one or under a \
            sanitizer; each test runs once, and the run fails if a test that passes in \
            `Tests/Data/cache-tests/tether-results.json` fails. Before a pause and before reading the origin's \
            record, the runner waits for the cache's background revalidations (`stale-while-revalidate`) to end, \
            as the suite's real pause lets them. Regenerate that file and this page with:

            ```sh
            TETHER_CACHE_TESTS_WRITE=$PWD/Tests/Data/cache-tests/tether-results.json \\
            TETHER_CACHE_TESTS_REPORT=$PWD/CACHE-TESTS.md \\
              swift test --filter CacheConformanceTests
            ```

            `TETHER_CACHE_TESTS_ORIGIN=http://127.0.0.1:8000` runs against the suite's own Node origin \
            (`npm run server`) instead, in real time (the pauses are waited for); both origins give the same \
            results, except that with Node one test per \
            run may fail with `URLError -1011`: for `headers-store-Content-Length` Node writes a 36-byte body \
            after `Content-Length: 10`, and the 26 bytes left over reach whichever request reuses that connection \
            (the Swift origin writes 10).

            How a browser test becomes a `URLConnection` load: the request has the test's method, headers and \
            body, plus `Test-ID`, `Req-Num` and `Test-Name`, and no cookies; `fetch`'s `redirect: manual` is a \
            delegate that declines the redirect; its `cache: no-cache` is `reloadRevalidatingCacheData` with the \
            `Cache-Control: max-age=0` that `fetch` adds. The checks are the suite's own, ported line by line \
            (`Set-Cookie` is checked too, which a browser cannot read); the suite's two-element form of \
            `expected_response_headers_missing` checks nothing in any runner (it reads a property that a \
            `fetch` `Headers` object does not have), and is kept so.

            ## Failing tests (\(failing.count)), by cause

            Each test with its kind, the suite's message and the browsers' published results.

            """
        var explained: Set<String> = []
        for cause in CacheTestCause.all {
            let tests = failing.filter { cause.ids.contains($0.id) }
            explained.formUnion(tests.map(\.id))
            guard !tests.isEmpty else { continue }
            text += "\n### \(cause.title) (\(tests.count))\n\n\(cause.explanation)\n\n" + self.table(tests)
        }
        let unexplained = failing.filter { !explained.contains($0.id) }
        if !unexplained.isEmpty {
            text += "\n### Not yet explained (\(unexplained.count))\n\n" + self.table(unexplained)
        }
        return text
    }

    private func table(_ tests: [CacheTestCatalog.Test]) -> String {
        var text = "| Test | Kind | Message | Chrome | Firefox | Safari |\n|---|---|---|---|---|---|\n"
        for test in tests {
            let failure = self.results.outcomes[test.id] ?? nil
            let message = failure.map { "\($0.kind): \($0.message)" } ?? "not run"
            let marks = self.browsers.map { $0.results.passed.contains(test.id) ? "pass" : "fail" }
            text += "| `\(test.id)` | \(test.kind) | \(Self.escaped(message)) | \(marks.joined(separator: " | ")) |\n"
        }
        return text
    }

    private func summaryTable(_ tests: [CacheTestCatalog.Test]) -> String {
        let columns = [("Tether", self.results)] + self.browsers.map { ($0.name, $0.results) }
        var text = "| Tests passed | " + columns.map(\.0).joined(separator: " | ") + " |\n"
        text += "|---|" + String(repeating: "---:|", count: columns.count) + "\n"
        var rows: [(String, [CacheTestCatalog.Test])] = [("**All \(tests.count)**", tests)]
        for kind in ["required", "optimal", "check"] {
            let subset = tests.filter { $0.kind == kind }
            rows.append(("\(kind) (\(subset.count))", subset))
        }
        for (index, (title, subset)) in rows.enumerated() {
            let counts = columns.map { column in String(subset.filter { column.1.passed.contains($0.id) }.count) }
            let cells = index == 0 ? counts.map { "**\($0)**" } : counts
            text += "| \(title) | " + cells.joined(separator: " | ") + " |\n"
        }
        return text
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
