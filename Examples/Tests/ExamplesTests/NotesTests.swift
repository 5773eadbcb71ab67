import Foundation
import Testing

/// notes: notes added by one run are listed by the next, on each file store; the memory store forgets them.
@Suite(.timeLimit(.minutes(1)))
struct NotesTests {
    static let seedNotes = ["Welcome to MyNotes.", "欢迎使用MyNotes."]

    /// Runs `notes` to its end; fails unless it exits 0; returns its lines.
    static func notes(_ arguments: [String]) async throws -> [String] {
        let (status, stdout, stderr) = try await Example("notes", arguments).finish()
        try #require(status == 0, "notes \(arguments) exited \(status): \(stderr)")
        return stdout
    }

    /// The texts of `list` lines ("DATE  TEXT").
    static func texts(_ lines: [String]) -> [String] {
        lines.filter { !$0.hasPrefix("added ") }.map { line in
            line.range(of: "  ").map { String(line[$0.upperBound...]) } ?? line
        }
    }

    @Test(arguments: [("plist", "NotesList.plist"), ("archive", "NotesList.archive"), ("sqlite", "NotesList.sqlite3")])
    func notesAddedInOneRunAreListedInTheNext(store: String, file: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = ["--store", store, "--dir", folder.path]

        let added = try await Self.notes(options + ["add", "buy milk"])
        #expect(added.count == 1)
        #expect(added.first.map { UUID(uuidString: String($0.dropFirst("added ".count))) != nil } == true)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path))

        let listed = try await Self.notes(options + ["add", "call Ada", "list"])
        #expect(Self.texts(listed) == Self.seedNotes + ["buy milk", "call Ada"])
        let again = try await Self.notes(options + ["list"])
        #expect(again == Array(listed.dropFirst()))
        // The seed's notes keep the seed's dates.
        #expect(again.first == "2010-08-04T16:01:03Z  Welcome to MyNotes.")
    }

    @Test func theMemoryStoreKeepsNotesForItsRunOnly() async throws {
        let listed = try await Self.notes(["--store", "memory", "add", "one", "add", "two", "list"])
        #expect(Self.texts(listed) == Self.seedNotes + ["one", "two"])
        let next = try await Self.notes(["--store", "memory", "list"])
        #expect(Self.texts(next) == Self.seedNotes)
    }

    @Test func aFileStoreWithoutAFolderIsAUsageError() async throws {
        let (status, stdout, stderr) = try await Example("notes", ["--store", "sqlite", "list"]).finish()
        #expect(status == 64)
        #expect(stdout.isEmpty)
        #expect(stderr.contains { $0.contains("--store sqlite needs --dir") }, "stderr: \(stderr)")
    }
}
