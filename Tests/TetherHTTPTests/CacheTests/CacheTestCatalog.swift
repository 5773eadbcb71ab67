import Foundation

/// The HTTP caching tests of `http-tests/cache-tests` as the suite exports them (`Tests/Data/cache-tests/tests.json`,
/// see the README there): suites of tests, each a list of requests with what the origin answers and what the client
/// must see.
struct CacheTestCatalog: Sendable {
    /// One test of the suite.
    struct Test: Sendable {
        var id: String
        var name: String
        /// `required`, `optimal` or `check` (absent in the export means `required`).
        var kind: String
        /// The id of the suite (`cc-freshness`, `vary`, …).
        var suite: String
        var dependsOn: [String]
        var browserOnly: Bool
        var browserSkip: Bool
        var cdnOnly: Bool
        var requests: [CacheTestRequest]

        /// Whether the test applies to a private cache: the browsers' selection (`browser_skip` marks the tests of
        /// shared caches and of what a page cannot do; `cdn_only` those of `CDN-Cache-Control`).
        var appliesToPrivateCaches: Bool { !self.cdnOnly && !self.browserSkip }
    }

    var tests: [Test]

    /// The tests that apply to a private cache, in the suite's order.
    var privateCacheTests: [Test] { self.tests.filter(\.appliesToPrivateCaches) }

    /// `Tests/Data/cache-tests`, found from this file's place in the package.
    static let dataDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Data/cache-tests")

    /// Reads the exported suite.
    static func load(from url: URL = dataDirectory.appendingPathComponent("tests.json")) throws -> CacheTestCatalog {
        let suites = try JSONDecoder().decode([CacheTestJSON].self, from: Data(contentsOf: url))
        var tests: [Test] = []
        for suite in suites {
            for test in suite["tests"]?.array ?? [] {
                tests.append(
                    Test(
                        id: test["id"]?.string ?? "",
                        name: test["name"]?.string ?? "",
                        kind: test["kind"]?.string ?? "required",
                        suite: suite["id"]?.string ?? "",
                        dependsOn: test["depends_on"]?.array?.compactMap(\.string) ?? [],
                        browserOnly: test["browser_only"]?.bool ?? false,
                        browserSkip: test["browser_skip"]?.bool ?? false,
                        cdnOnly: test["cdn_only"]?.bool ?? false,
                        requests: (test["requests"]?.array ?? []).map(CacheTestRequest.init)
                    )
                )
            }
        }
        return CacheTestCatalog(tests: tests)
    }
}
