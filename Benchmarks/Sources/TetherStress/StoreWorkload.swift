import Foundation
import NIOConcurrencyHelpers
import TetherStore

/// The soak's store work: in a fresh temporary directory, for each store kind (XML property list, binary property
/// list, keyed archive, SQLite), open a store, insert 20 notes, update 10, delete 10, check the count, release it,
/// reopen it and check the notes are there; then remove the directory. Loops until stopped.
enum StoreWorkload {
    /// Counts of rounds, changes and failures.
    struct Totals {
        var rounds = 0
        var changes = 0
        var errors = 0
        var firstErrors: [String] = []
    }

    static let kinds = ["plist-xml", "plist-binary", "archive", "sqlite"]

    static func open(_ kind: String, url: URL) throws -> any RecordStore<Note> {
        switch kind {
        case "plist-xml":
            return try PropertyListStore<Note>(url: url.appendingPathComponent("notes.plist"), format: .xml)
        case "plist-binary":
            return try PropertyListStore<Note>(url: url.appendingPathComponent("notes.bplist"), format: .binary)
        case "archive": return try ArchiveStore<Note>(url: url.appendingPathComponent("notes.archive"))
        default: return try SQLiteStore<Note>(url: url.appendingPathComponent("notes.sqlite"))
        }
    }

    /// Reopens, retrying `.locked` for up to 2 s: a file store's lock is released when its actor is deallocated,
    /// which may happen a moment after the last await on it.
    static func reopen(_ kind: String, url: URL) async throws -> any RecordStore<Note> {
        let deadline = ProcessProbe.now() + 2
        while true {
            do {
                return try open(kind, url: url)
            } catch let error as StoreError where error.code == .locked && ProcessProbe.now() < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    static func round(kind: String, totals: NIOLockedValueBox<Totals>) async {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-stress-store-\(getpid())-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var notes = (0..<20).map { Note(content: "note \($0) " + String(repeating: "·", count: 200)) }
            do {
                let store = try open(kind, url: directory)
                for note in notes { try await store.insert(note) }
                for index in 0..<10 {
                    notes[index].content += " (edited)"
                    try await store.update(notes[index])
                }
                for note in notes[10...] { try await store.delete(id: note.id) }
                let count = try await store.count()
                if count != 10 { throw StressError("\(kind): \(count) notes after the changes, not 10") }
            }
            let reopened = try await reopen(kind, url: directory)
            let stored = try await reopened.fetchAll()
            if stored.map(\.id) != notes[..<10].map(\.id) || stored.map(\.content) != notes[..<10].map(\.content) {
                throw StressError("\(kind): the reopened store holds other notes")
            }
            totals.withLockedValue {
                $0.rounds += 1
                $0.changes += 40
            }
        } catch {
            totals.withLockedValue { totals in
                totals.errors += 1
                if totals.firstErrors.count < 5 { totals.firstErrors.append("\(error)") }
            }
        }
    }

    static func run(totals: NIOLockedValueBox<Totals>, stop: @Sendable () -> Bool) async {
        var index = 0
        while !stop() {
            await round(kind: kinds[index % kinds.count], totals: totals)
            index += 1
        }
    }
}
