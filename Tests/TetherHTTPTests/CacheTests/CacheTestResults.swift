import Foundation

/// Results of a run, per test id: passed, or the failure. Read and written in the suite's own results format
/// (`{"id": true, "other": ["Assertion", "message"]}`, keys sorted), the format of its published browser results.
struct CacheTestResults: Sendable {
    var outcomes: [String: CacheTestFailure?]

    var passed: Set<String> { Set(self.outcomes.compactMap { $0.value == nil ? $0.key : nil }) }

    /// Reads a results file (the committed baseline, or a browser's results).
    static func load(from url: URL) throws -> CacheTestResults {
        let object = try JSONDecoder().decode([String: CacheTestJSON].self, from: Data(contentsOf: url))
        var outcomes: [String: CacheTestFailure?] = [:]
        for (id, value) in object {
            if value == .bool(true) {
                outcomes[id] = .some(nil)
            } else {
                let parts = value.array ?? []
                outcomes[id] = CacheTestFailure(
                    kind: parts.first?.text ?? "unknown",
                    message: parts.dropFirst().first?.text ?? value.text
                )
            }
        }
        return CacheTestResults(outcomes: outcomes)
    }

    /// The file's text: one test per line, in the order of their ids.
    func json() throws -> Data {
        var lines: [String] = []
        for id in self.outcomes.keys.sorted() {
            let key = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
            if let failure = self.outcomes[id] ?? nil {
                let parts = String(decoding: try JSONEncoder().encode([failure.kind, failure.message]), as: UTF8.self)
                lines.append("  \(key): \(parts)")
            } else {
                lines.append("  \(key): true")
            }
        }
        return Data(("{\n" + lines.joined(separator: ",\n") + "\n}\n").utf8)
    }
}
