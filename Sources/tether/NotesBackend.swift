import Foundation
import TetherNotes
import TetherStore

/// Where a notes subcommand works: a local store (`NoteDAO`) or a notes server (`--remote`).
enum NotesBackend {
    case local(NoteDAO)
    case remote(RemoteNoteStore)

    func add(_ text: String) async throws -> Note {
        switch self {
        case .local(let dao):
            let note = Note(content: text)
            try await dao.create(note)
            return note
        case .remote(let store):
            return try await store.add(text)
        }
    }

    func list() async throws -> [Note] {
        switch self {
        case .local(let dao): try await dao.findAll()
        case .remote(let store): try await store.list()
        }
    }

    /// Replaces the text of note `id`; false when there is no such note.
    func edit(_ id: UUID, text: String) async throws -> Bool {
        switch self {
        case .local(let dao):
            guard var note = try await dao.findById(Note(id: id, content: "")) else { return false }
            note.content = text
            try await dao.modify(note)
            return true
        case .remote(let store):
            do {
                _ = try await store.edit(id, text: text)
                return true
            } catch let error as NotesError where error.code == .notFound {
                return false
            }
        }
    }

    /// Removes note `id`; false when there is no such note.
    func remove(_ id: UUID) async throws -> Bool {
        switch self {
        case .local(let dao):
            return try await dao.remove(Note(id: id, content: ""))
        case .remote(let store):
            do {
                try await store.remove(id)
                return true
            } catch let error as NotesError where error.code == .notFound {
                return false
            }
        }
    }

    func close() async {
        if case .remote(let store) = self { await store.close() }
    }
}
