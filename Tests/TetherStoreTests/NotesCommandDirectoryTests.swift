import Foundation
import Testing
import TetherTestSupport

/// `tether notes` without `--dir` keeps its store where `AppDirectories(appName: "tether")` says, and that follows the
/// process's `$HOME` and the XDG variables, as a Linux user expects.
struct NotesCommandDirectoryTests {
    /// The parent's environment without the variables under test, plus `changes`.
    static func environment(_ changes: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"] { environment[name] = nil }
        environment.merge(changes) { _, new in new }
        return environment
    }

    static func notes(_ arguments: [String], _ environment: [String: String]) async throws -> CommandRun {
        let run = try await CommandRun.run(
            try BuiltProduct.require("tether"),
            ["notes"] + arguments,
            environment: Self.environment(environment)
        )
        #expect(run.status == 0, "tether notes \(arguments): \(run.errors)")
        return run
    }

    @Test(.timeLimit(.minutes(1)))
    func theStoreLivesUnderTheProcessHome() async throws {
        try await withTemporaryDirectory { home in
            let added = try await Self.notes(["add", "written under HOME"], ["HOME": home.path])
            let documents = home.appendingPathComponent(".local/share/tether/Documents")
            let files = try FileManager.default.contentsOfDirectory(atPath: documents.path)
            #expect(!files.isEmpty, "nothing in \(documents.path)")

            let listed = try await Self.notes(["list", "--json"], ["HOME": home.path])
            #expect(listed.output.contains("written under HOME"))
            #expect(listed.output.contains(added.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anAbsoluteXDGDataHomeWinsOverHome() async throws {
        try await withTemporaryDirectory { root in
            let home = root.appendingPathComponent("home")
            let data = root.appendingPathComponent("data")
            _ = try await Self.notes(["add", "in XDG_DATA_HOME"], ["HOME": home.path, "XDG_DATA_HOME": data.path])
            let files = try FileManager.default.contentsOfDirectory(
                atPath: data.appendingPathComponent("tether/Documents").path
            )
            #expect(!files.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent(".local").path))

            // A relative XDG value is ignored, as the XDG rules say: the store is under HOME again, and empty.
            let listed = try await Self.notes(["list"], ["HOME": home.path, "XDG_DATA_HOME": "relative/data"])
            #expect(!listed.output.contains("in XDG_DATA_HOME"))
            #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent(".local/share/tether").path))
        }
    }
}
