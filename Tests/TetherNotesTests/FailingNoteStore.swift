import Foundation
import TetherStore

/// A store whose every call fails the way a real one does: with an error naming its file and the database's words.
struct FailingNoteStore: RecordStore {
    var error: StoreError {
        StoreError(
            code: .io,
            message: "disk I/O error (SQLITE_IOERR) in /home/alice/secret/NotesList.sqlite3",
            url: URL(fileURLWithPath: "/home/alice/secret/NotesList.sqlite3")
        )
    }

    func insert(_ record: Note) async throws { throw error }
    func update(_ record: Note) async throws { throw error }
    func upsert(_ record: Note) async throws { throw error }
    func delete(id: UUID) async throws -> Bool { throw error }
    func fetchAll() async throws -> [Note] { throw error }
    func fetchOne(id: UUID) async throws -> Note? { throw error }
    func count() async throws -> Int { throw error }
}
