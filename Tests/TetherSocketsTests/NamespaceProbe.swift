import Foundation
import Testing
import TetherTestSupport

/// A probe executable run in a user and network namespace of its own (`unshare -rn`), after shell `setup` lines.
enum NamespaceProbe {
    /// Runs `probe scenario` in a fresh namespace after `setup`; expects exit status 0 and returns what it printed,
    /// trimmed (its verdict line).
    static func run(unshare: String, setup: String, probe: String, scenario: String) async throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: unshare)
        process.arguments = ["-rn", "/bin/sh", "-c", "set -e\n\(setup)\nexec \"$0\" \"$@\"", probe, scenario]
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = (environment["PATH"].map { $0 + ":" } ?? "") + "/usr/sbin:/sbin"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let (printed, problems) = try await onThread { () -> (Data, Data) in
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            let problems = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (printed, problems)
        }
        let text = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(process.terminationStatus == 0, "\(text)\n\(String(decoding: problems, as: UTF8.self))")
        return text
    }
}
