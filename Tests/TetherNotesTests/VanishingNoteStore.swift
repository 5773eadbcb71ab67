import Foundation
import TetherStore

/// A store on which every note is removed between an edit's read and its write: `fetchOne` finds the note, `update`
/// no longer does (as when another connection removes it in between).
struct VanishingNoteStore: RecordStore {
    func insert(_ record: Note) async throws {}
    func update(_ record: Note) async throws {
        throw StoreError(code: .notFound, message: "no record with id \(record.id)")
    }
    func upsert(_ record: Note) async throws {}
    func delete(id: UUID) async throws -> Bool { false }
    func fetchAll() async throws -> [Note] { [] }
    func fetchOne(id: UUID) async throws -> Note? { Note(id: id, content: "before") }
    func count() async throws -> Int { 0 }
}
