/// A store of `Codable` records keyed by their `id`, with the same verbs on every backend
/// (``PropertyListStore``, ``ArchiveStore``, ``SQLiteStore``, ``MemoryStore``).
///
/// Records keep their insertion order; replacing a record keeps its position. Every mutating call on a persistent
/// store returns only once the change is durable.
///
/// ```swift
/// let store = try SQLiteStore<Note>(url: url)
/// try await store.insert(Note(content: "Hello"))
/// let all = try await store.fetchAll()
/// ```
public protocol RecordStore<Record>: Sendable {
    /// The stored record type.
    associatedtype Record: Codable & Identifiable & Sendable where Record.ID: Codable & Sendable

    /// Adds a record at the end.
    /// - Throws: ``StoreError/Code/duplicateID`` if a record with this id exists.
    func insert(_ record: Record) async throws
    /// Replaces the record with the same id, keeping its position.
    /// - Throws: ``StoreError/Code/notFound`` if no record has this id.
    func update(_ record: Record) async throws
    /// Inserts the record, or replaces the record with the same id keeping its position.
    func upsert(_ record: Record) async throws
    /// Deletes the record with this id.
    /// - Returns: `false` if there was nothing to delete.
    @discardableResult func delete(id: Record.ID) async throws -> Bool
    /// All records in insertion order.
    func fetchAll() async throws -> [Record]
    /// The record with this id, or `nil`.
    func fetchOne(id: Record.ID) async throws -> Record?
    /// The number of records.
    func count() async throws -> Int
}
