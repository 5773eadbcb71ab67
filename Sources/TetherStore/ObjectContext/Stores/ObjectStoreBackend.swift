import Foundation

/// One stored object with its version (incremented by each saved update; the optimistic-locking token).
struct StoredObject: Sendable, Identifiable, Codable {
    var id: ObjectID
    var values: [String: AttributeValue]
    var version: Int64
}

/// The changes one `save()` writes, all or nothing.
struct ObjectChangeSet: Sendable {
    var inserted: [ManagedObject] = []
    /// Updated objects with the version the context read (`nil`: never read, no check).
    var updated: [(object: ManagedObject, expectedVersion: Int64?)] = []
    var deleted: [(id: ObjectID, expectedVersion: Int64?)] = []
}

/// A persistent store behind a ``PersistentContainer``: SQLite, a binary file, or memory.
protocol ObjectStoreBackend: Sendable {
    /// The objects of an entity in insertion order.
    func objects(entityName: String) throws -> [StoredObject]
    /// One object, or `nil`.
    func object(_ id: ObjectID) throws -> StoredObject?
    /// Applies the changes atomically; returns the new version of every inserted and updated object.
    /// - Throws: `.conflict` when an expected version does not match (nothing written), `.io` on a failed write.
    func apply(_ changes: ObjectChangeSet) throws -> [ObjectID: Int64]
}
