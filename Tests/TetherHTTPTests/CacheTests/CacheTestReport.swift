import Foundation

/// `CACHE-TESTS.md`: Tether's results next to the published browser results, and every failing test with its reason.
struct CacheTestReport {
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
        var text = "# Cache conformance\n\n"
        text += self.summaryTable(tests)
        text += "\n## Failing tests\n"
        for suite in Self.orderedSuites(tests) {
            let failing = tests.filter { $0.suite == suite && !self.results.passed.contains($0.id) }
            guard !failing.isEmpty else { continue }
            text +=
                "\n### \(suite)\n\n| Test | Kind | Reason | Chrome | Firefox | Safari |\n|---|---|---|---|---|---|\n"
            for test in failing {
                let failure = self.results.outcomes[test.id] ?? nil
                let reason = failure.map { "\($0.kind): \($0.message)" } ?? "not run"
                let marks = self.browsers.map { $0.results.passed.contains(test.id) ? "pass" : "fail" }
                text +=
                    "| `\(test.id)` | \(test.kind) | \(Self.escaped(reason)) | \(marks.joined(separator: " | ")) |\n"
            }
        }
        return text
    }

    private func summaryTable(_ tests: [CacheTestCatalog.Test]) -> String {
        let columns = [("Tether", self.results)] + self.browsers.map { ($0.name, $0.results) }
        var text = "| Tests that apply to a private cache | " + columns.map(\.0).joined(separator: " | ") + " |\n"
        text += "|---|" + String(repeating: "---|", count: columns.count) + "\n"
        let rows: [(String, [CacheTestCatalog.Test])] = [
            ("All (\(tests.count))", tests),
            ("required (\(tests.filter { $0.kind == "required" }.count))", tests.filter { $0.kind == "required" }),
            ("optimal (\(tests.filter { $0.kind == "optimal" }.count))", tests.filter { $0.kind == "optimal" }),
            ("check (\(tests.filter { $0.kind == "check" }.count))", tests.filter { $0.kind == "check" }),
        ]
        for (title, subset) in rows {
            let counts = columns.map { column in String(subset.filter { column.1.passed.contains($0.id) }.count) }
            text += "| \(title) | " + counts.joined(separator: " | ") + " |\n"
        }
        return text
    }

    private static func orderedSuites(_ tests: [CacheTestCatalog.Test]) -> [String] {
        var seen: [String] = []
        for test in tests where !seen.contains(test.suite) { seen.append(test.suite) }
        return seen
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
