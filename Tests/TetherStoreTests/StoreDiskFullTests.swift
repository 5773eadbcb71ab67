import Foundation
import Testing
import TetherTestSupport

/// A full file system (`ENOSPC`) under every file store: a writer process fills a store on a small tmpfs, mounted in
/// a user and mount namespace of its own (`unshare -rm`), until a write fails; then it tries an update and a delete on
/// the full file system, frees some room and reopens the store. The failure must be a typed `StoreError`, and every
/// acknowledged change (and nothing else) must be in the reopened store. Tmpfs sizes vary so that the failure lands
/// in different places: a journal append, a compaction (a journaled store rewrites its file when the journal outgrows
/// it), an SQLite page or WAL write.
@Suite(.timeLimit(.minutes(2)))
struct StoreDiskFullTests {
    static let kinds = ["plistXML", "plistBinary", "archive", "sqlite"]
    static let sizes = ["192k", "512k", "1m"]

    @Test(arguments: kinds, sizes)
    func aFullFileSystemIsATypedErrorAndLosesNothingAcknowledged(kind: String, size: String) async throws {
        let unshare = try SystemRequirements.tool("unshare", for: "a mount namespace with a small tmpfs")
        try SystemRequirements.namespaces("-rm", for: "a mount namespace with a small tmpfs")
        let writer = try BuiltProduct.require("TetherStoreCrashWriter")
        try await withTemporaryDirectory { directory in
            let script = """
                mount -t tmpfs -o size=\(size) tmpfs "$1" || exit 3
                exec "$2" "$3" "$1/notes.store" fill "$1/ballast"
                """
            let run = try await CommandRun.run(
                URL(fileURLWithPath: unshare),
                ["-rm", "/bin/sh", "-c", script, "sh", directory.path, writer.path, kind]
            )
            #expect(run.status == 0, "\(run.errors)")
            let lines = run.output.split(separator: "\n").map(String.init)
            let full = try #require(lines.first { $0.hasPrefix("full ") }, "\(lines) \(run.errors)")
            // A typed error, and one that says what happened.
            #expect(full.hasPrefix("full io "), "\(full)")
            #expect(full.contains("No space left") || full.contains("ENOSPC") || full.contains("full"), "\(full)")
            #expect(lines.contains { $0.hasPrefix("update ") })
            #expect(lines.contains { $0.hasPrefix("delete ") })
            let verdict = try #require(lines.last)
            #expect(verdict.hasPrefix("verdict ok "), "\(lines)")
        }
    }
}
