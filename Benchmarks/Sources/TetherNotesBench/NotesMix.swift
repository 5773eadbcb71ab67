import Dispatch
import Foundation
import TetherNotes
import TetherStore

/// The fixed mix of one worker: cycles of add a note, edit it, remove it (three operations, the table's size stays
/// at about the number of workers; `list` is measured apart, by ``ListRun``). Through a notes server
/// (``remote(_:)``) or straight on the store under it (``direct(_:)``, the same `NoteDAO` calls the server makes).
struct NotesMix: Sendable {
    /// Adds a note with this text; returns its id.
    let add: @Sendable (String) async throws -> UUID
    /// Replaces the text of a note.
    let edit: @Sendable (UUID, String) async throws -> Void
    /// Removes a note.
    let remove: @Sendable (UUID) async throws -> Void

    /// Operations in one ``cycle(worker:index:latencies:)``.
    static let operationsPerCycle = 3

    /// Through a client of a notes server.
    static func remote(_ notes: RemoteNoteStore) -> NotesMix {
        NotesMix(
            add: { try await notes.add($0).id },
            edit: { _ = try await notes.edit($0, text: $1) },
            remove: { try await notes.remove($0) }
        )
    }

    /// Straight on `dao`, as `NotesServer` carries the requests out (an edit reads the note, then writes it).
    static func direct(_ dao: NoteDAO) -> NotesMix {
        NotesMix(
            add: { text in
                let note = Note(content: text)
                try await dao.create(note)
                return note.id
            },
            edit: { id, text in
                guard var note = try await dao.findById(Note(id: id, content: "")) else {
                    throw BenchError("no note \(id)")
                }
                note.content = text
                try await dao.modify(note)
            },
            remove: { id in
                guard try await dao.remove(Note(id: id, content: "")) else { throw BenchError("no note \(id)") }
            }
        )
    }

    /// One cycle: add, edit, remove, each timed (nanoseconds appended to `latencies`). Texts are about 80 bytes.
    func cycle(worker: Int, index: Int, latencies: inout [UInt64]) async throws {
        let text = "worker \(worker) note \(index): " + String(repeating: "x", count: 56)
        var start = DispatchTime.now().uptimeNanoseconds
        let id = try await add(text)
        var end = DispatchTime.now().uptimeNanoseconds
        latencies.append(end - start)
        start = end
        try await edit(id, text + " (edited)")
        end = DispatchTime.now().uptimeNanoseconds
        latencies.append(end - start)
        start = end
        try await remove(id)
        end = DispatchTime.now().uptimeNanoseconds
        latencies.append(end - start)
    }
}
