import Foundation
import GRDB

/// The SQLite store of a ``PersistentContainer``: one row per object (`entity`, `uuid`, `version`, JSON values) in a
/// WAL database with `synchronous = FULL`; each save is one transaction.
final class SQLiteObjectStore: ObjectStoreBackend {
    private let pool: DatabasePool
    private let url: URL

    /// Opens (or creates) the store at `url` for `model`, migrating the stored model in place when it may.
    /// - Parameters:
    ///   - url: The database file.
    ///   - model: The model the store is opened with.
    ///   - beforeWriting: Called between the read-only check and the write transaction (for tests: another process
    ///     may migrate the store just then).
    init(url: URL, model: ObjectModel, beforeWriting: () -> Void = {}) throws {
        self.url = url
        let storedModel = StoredModel(model)
        // Check the model read-only first: an incompatible store is not touched at all.
        if FileManager.default.fileExists(atPath: url.path) {
            var configuration = Configuration()
            configuration.readonly = true
            do {
                let queue = try DatabaseQueue(path: url.path, configuration: configuration)
                let data = try queue.read { db in try Self.storedModelData(db) }
                try queue.close()
                if let data {
                    _ = try JSONDecoder().decode(StoredModel.self, from: data).migration(to: model, url: url)
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw sqliteStoreError(error, "cannot read the object store", url: url)
            }
        }
        beforeWriting()
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // Objects are personal: a new file (and so its -wal and -shm) is its owner's only.
        FileIO.createPrivateIfAbsent(url)
        do {
            pool = try DatabasePool(path: url.path, configuration: configuration)
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // The model is read again under the write lock: another process may have migrated the store since
                // the check above, and only one may migrate it.
                try db.inTransaction(.immediate) {
                    try Self.prepare(db, for: storedModel, model: model, url: url)
                    return .commit
                }
            }
        } catch {
            throw sqliteStoreError(error, "cannot open the object store", url: url)
        }
    }

    private static func storedModelData(_ db: Database) throws -> Data? {
        guard try db.tableExists("tether_metadata") else { return nil }
        return try Data.fetchOne(db, sql: "SELECT value FROM tether_metadata WHERE key = 'model'")
    }

    /// Creates the tables, checks the stored model against `model`, fills new attributes' defaults and records the
    /// model: inside one write transaction.
    private static func prepare(_ db: Database, for storedModel: StoredModel, model: ObjectModel, url: URL) throws {
        var fills: [String: [String: AttributeValue]] = [:]
        var needsModelWrite = true
        if let data = try storedModelData(db) {
            let old = try JSONDecoder().decode(StoredModel.self, from: data)
            fills = try old.migration(to: model, url: url)
            needsModelWrite = old != storedModel
        }
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS tether_metadata (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS tether_object (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, entity TEXT NOT NULL, uuid TEXT NOT NULL UNIQUE,
                    version INTEGER NOT NULL, data BLOB NOT NULL);
                CREATE INDEX IF NOT EXISTS tether_object_entity ON tether_object(entity);
                """
        )
        for (entity, values) in fills {
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT seq, data FROM tether_object WHERE entity = ?",
                arguments: [entity]
            )
            for row in rows {
                let seq: Int64 = row["seq"]
                var stored = try JSONDecoder().decode([String: AttributeValue].self, from: row["data"] as Data)
                for (name, value) in values where stored[name] == nil { stored[name] = value }
                try db.execute(
                    sql: "UPDATE tether_object SET data = ? WHERE seq = ?",
                    arguments: [try encode(stored), seq]
                )
            }
        }
        if needsModelWrite {
            try db.execute(
                sql: "INSERT INTO tether_metadata (key, value) VALUES ('model', ?) "
                    + "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                arguments: [try JSONEncoder().encode(storedModel)]
            )
        }
    }

    func objects(entityName: String) throws -> [StoredObject] {
        do {
            return try pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: "SELECT uuid, version, data FROM tether_object WHERE entity = ? ORDER BY seq",
                    arguments: [entityName]
                ).map { try Self.object(entityName, $0) }
            }
        } catch {
            throw sqliteStoreError(error, "cannot fetch \(entityName)", url: url)
        }
    }

    func object(_ id: ObjectID) throws -> StoredObject? {
        do {
            return try pool.read { db in
                try Row.fetchOne(
                    db,
                    sql: "SELECT uuid, version, data FROM tether_object WHERE uuid = ? AND entity = ?",
                    arguments: [id.uuid.uuidString, id.entityName]
                ).map { try Self.object(id.entityName, $0) }
            }
        } catch {
            throw sqliteStoreError(error, "cannot fetch \(id)", url: url)
        }
    }

    func apply(_ changes: ObjectChangeSet) throws -> [ObjectID: Int64] {
        let url = url
        do {
            return try pool.write { db in
                var versions: [ObjectID: Int64] = [:]
                func version(of id: ObjectID) throws -> Int64? {
                    try Int64.fetchOne(
                        db,
                        sql: "SELECT version FROM tether_object WHERE uuid = ?",
                        arguments: [id.uuid.uuidString]
                    )
                }
                for (id, expected) in changes.deleted {
                    if let expected, try version(of: id) != expected {
                        throw StoreError(code: .conflict, message: "\(id) changed since it was read", url: url)
                    }
                    try db.execute(sql: "DELETE FROM tether_object WHERE uuid = ?", arguments: [id.uuid.uuidString])
                }
                for (object, expected) in changes.updated {
                    guard let current = try version(of: object.id) else {
                        throw StoreError(
                            code: .conflict,
                            message: "\(object.id) was deleted since it was read",
                            url: url
                        )
                    }
                    if let expected, current != expected {
                        throw StoreError(code: .conflict, message: "\(object.id) changed since it was read", url: url)
                    }
                    try db.execute(
                        sql: "UPDATE tether_object SET data = ?, version = ? WHERE uuid = ?",
                        arguments: [try Self.encode(object.values), current + 1, object.id.uuid.uuidString]
                    )
                    versions[object.id] = current + 1
                }
                for object in changes.inserted {
                    try db.execute(
                        sql: "INSERT INTO tether_object (entity, uuid, version, data) VALUES (?, ?, 1, ?)",
                        arguments: [object.entityName, object.id.uuid.uuidString, try Self.encode(object.values)]
                    )
                    versions[object.id] = 1
                }
                return versions
            }
        } catch {
            throw sqliteStoreError(error, "save failed", url: url)
        }
    }

    private static func encode(_ values: [String: AttributeValue]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(values)
    }

    private static func object(_ entityName: String, _ row: Row) throws -> StoredObject {
        guard let uuid = UUID(uuidString: row["uuid"]) else {
            throw StoreError(code: .corruptData, message: "bad object uuid \(String(describing: row["uuid"]))")
        }
        let values = try JSONDecoder().decode([String: AttributeValue].self, from: row["data"] as Data)
        return StoredObject(id: ObjectID(entityName: entityName, uuid: uuid), values: values, version: row["version"])
    }
}
