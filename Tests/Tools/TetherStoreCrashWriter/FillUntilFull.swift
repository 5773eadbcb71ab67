import Foundation
import TetherStore

/// The `fill` mode: fills the store until the file system is full, then checks that what was acknowledged survived.
///
/// Meant to run on a small tmpfs (the test mounts one in a user and mount namespace). Before filling it writes a
/// ballast file next to the store; after the first failure it tries an update and a delete on the full file system,
/// removes the ballast so that the store can be opened again, reopens it in a new instance and compares it with what
/// was acknowledged. Output, one line each:
///   full <code> <text>              the first failure (its `StoreError` code and text)
///   update ok|failed <code>         an update of an acknowledged note on the full file system
///   delete ok|failed <code>         a delete of another acknowledged note on the full file system
///   verdict ok <count>              every acknowledged change is in the reopened store, nothing else is
///   verdict bad <text>              what differs
enum FillUntilFull {
    static func run(open: () throws -> any RecordStore<Note>, ballast: URL) async {
        do {
            try Data(repeating: 0x62, count: 64 << 10).write(to: ballast)
        } catch {
            emit("verdict bad cannot write the ballast: \(error)")
            return
        }
        // The store is released (a journaled store compacts then, on the full file system) before the ballast goes.
        guard let expected = await Self.fillAndChange(open: open) else { return }
        try? FileManager.default.removeItem(at: ballast)
        do {
            let reopened = try open()
            let found = Dictionary(uniqueKeysWithValues: try await reopened.fetchAll().map { ($0.id, $0.content) })
            if found == expected {
                emit("verdict ok \(found.count)")
            } else {
                let missing = expected.keys.filter { found[$0] != expected[$0] }.count
                let extra = found.keys.filter { expected[$0] == nil }.count
                emit("verdict bad \(missing) acknowledged notes missing or changed, \(extra) unexpected")
            }
        } catch {
            emit("verdict bad cannot reopen: \(Self.describe(error))")
        }
    }

    /// Opens the store, fills it until a write fails, then tries an update and a delete; returns what should survive,
    /// nil (after a verdict) when the run cannot say.
    static func fillAndChange(open: () throws -> any RecordStore<Note>) async -> [UUID: String]? {
        var expected: [UUID: String] = [:]
        let store: any RecordStore<Note>
        do {
            store = try open()
        } catch {
            emit("verdict bad cannot open: \(error)")
            return nil
        }
        var full = false
        for index in 0..<100_000 {
            let note = Note(content: "n\(index)-" + String(repeating: "f", count: 1_500))
            do {
                try await store.insert(note)
                expected[note.id] = note.content
            } catch {
                emit("full \(Self.describe(error))")
                full = true
                break
            }
        }
        guard full, expected.count >= 2 else {
            emit("verdict bad the file system never filled (\(expected.count) notes)")
            return nil
        }
        let ids = expected.keys.sorted { $0.uuidString < $1.uuidString }
        var updated = Note(id: ids[0], content: expected[ids[0]]!)
        updated.content += String(repeating: "u", count: 4_000)
        do {
            try await store.update(updated)
            expected[ids[0]] = updated.content
            emit("update ok")
        } catch {
            emit("update failed \(Self.describe(error))")
        }
        do {
            try await store.delete(id: ids[1])
            expected[ids[1]] = nil
            emit("delete ok")
        } catch {
            emit("delete failed \(Self.describe(error))")
        }
        return expected
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? StoreError else { return "untyped \(error)" }
        return "\(error.code) \(error)"
    }
}
