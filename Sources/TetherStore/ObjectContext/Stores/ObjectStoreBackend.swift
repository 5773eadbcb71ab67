import Foundation

/// One stored object with its version (incremented by each saved update; the optimistic-locking token).
///
/// `package`: the stores of other modules of this package (TetherPostgres) implement ``ObjectStoreBackend``.
package struct StoredObject: Sendable, Identifiable, Codable {
    package var id: ObjectID
    package var values: [String: AttributeValue]
    package var version: Int64

    package init(id: ObjectID, values: [String: AttributeValue], version: Int64) {
        self.id = id
        self.values = values
        self.version = version
    }
}

/// The changes one `save()` writes, all or nothing.
package struct ObjectChangeSet: Sendable {
    package var inserted: [ManagedObject] = []
    /// Updated objects with the version the context read (`nil`: never read, no check).
    package var updated: [(object: ManagedObject, expectedVersion: Int64?)] = []
    package var deleted: [(id: ObjectID, expectedVersion: Int64?)] = []
}

/// A persistent store behind a ``PersistentContainer``: SQLite, a binary file, memory, or (`package` access, for
/// TetherPostgres) a store of another module of this package.
package protocol ObjectStoreBackend: Sendable {
    /// The objects of an entity in insertion order.
    func objects(entityName: String) throws -> [StoredObject]
    /// One object, or `nil`.
    func object(_ id: ObjectID) throws -> StoredObject?
    /// Applies the changes atomically; returns the new version of every inserted and updated object.
    /// - Throws: `.conflict` when an expected version does not match (nothing written), `.io` on a failed write.
    func apply(_ changes: ObjectChangeSet) throws -> [ObjectID: Int64]
}
