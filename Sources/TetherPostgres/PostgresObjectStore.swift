import Foundation
import NIOCore
import PostgresNIO
import TetherStore

/// The PostgreSQL store of a `PersistentContainer`: `SQLiteObjectStore`'s layout in a database (one row per object
/// with its `version`, JSON values), each save one transaction that locks the rows it changes (`SELECT … FOR UPDATE`)
/// and checks their versions, so that of two containers (processes) saving the same object from the same version one
/// saves and the other gets `.conflict`.
///
/// One container per database (or per `search_path` schema). The calls are synchronous, as the object context's are:
/// the caller waits while ``BlockingBridge`` runs the queries.
final class PostgresObjectStore: ObjectStoreBackend {
    /// The version of the tables' layout this release writes, kept in `tether_metadata` under `layout`; a database
    /// at a later version (made by a newer release) is refused with `.incompatibleModel` and left alone.
    static let layoutVersion = 1

    private let pool: PostgresPool

    /// Opens the store, creating its tables or migrating its model (new entities, new optional or defaulted
    /// attributes) in one transaction; an incompatible model leaves the database untouched.
    init(configuration: PostgresConfiguration, model: ObjectModel) throws {
        let pool = try PostgresPool(configuration: configuration, executor: BlockingBridge.shared)
        self.pool = pool
        let storedModel = StoredModel(model)
        try BlockingBridge.shared.wait {
            try await pool.withDedicatedConnection("cannot open the object store") { connection in
                try await PostgresPool.transaction(on: connection) { connection in
                    try await Self.prepare(on: connection, model: model, storedModel: storedModel)
                }
            }
        }
    }

    private static func prepare(
        on connection: PostgresConnection,
        model: ObjectModel,
        storedModel: StoredModel
    )
        async throws
    {
        let logger = PostgresPool.logger
        try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.lockKey))", logger: logger)
        for statement in [
            "CREATE TABLE IF NOT EXISTS tether_metadata (key TEXT PRIMARY KEY, value BYTEA NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS tether_object (seq BIGSERIAL NOT NULL, entity TEXT NOT NULL,
            uuid TEXT NOT NULL UNIQUE, version BIGINT NOT NULL, data BYTEA NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS tether_object_entity ON tether_object (entity, seq)",
        ] {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        try await checkLayout(on: connection)
        let stored = try await connection.query(
            "SELECT value FROM tether_metadata WHERE key = 'model'",
            logger: logger
        ).decode(ByteBuffer.self).first(where: { _ in true })
        var needsModelWrite = true
        if let stored {
            let old: StoredModel
            do {
                old = try JSONDecoder().decode(StoredModel.self, from: Data(stored.readableBytesView))
            } catch {
                throw StoreError(code: .corruptData, message: "the stored model does not decode", underlying: error)
            }
            let fills = try old.migration(to: model, url: nil)
            needsModelWrite = old != storedModel
            for (entity, values) in fills {
                var rows: [(Int64, ByteBuffer)] = []
                let sequence = try await connection.query(
                    "SELECT seq, data FROM tether_object WHERE entity = \(entity)",
                    logger: logger
                )
                for try await row in sequence.decode((Int64, ByteBuffer).self) { rows.append(row) }
                for (seq, data) in rows {
                    var object = try decodeValues(data)
                    for (name, value) in values where object[name] == nil { object[name] = value }
                    let encoded = try encode(object)
                    try await connection.query(
                        "UPDATE tether_object SET data = \(encoded) WHERE seq = \(seq)",
                        logger: logger
                    )
                }
            }
        }
        if needsModelWrite {
            let data = ByteBuffer(bytes: try JSONEncoder().encode(storedModel))
            try await connection.query(
                """
                INSERT INTO tether_metadata (key, value) VALUES ('model', \(data))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """,
                logger: logger
            )
        }
    }

    /// Records the layout version in a new database; refuses a database at a later one.
    private static func checkLayout(on connection: PostgresConnection) async throws {
        let logger = PostgresPool.logger
        let stored = try await connection.query(
            "SELECT value FROM tether_metadata WHERE key = 'layout'",
            logger: logger
        ).decode(ByteBuffer.self).first(where: { _ in true })
        guard let stored else {
            let version = ByteBuffer(string: "\(layoutVersion)")
            try await connection.query(
                "INSERT INTO tether_metadata (key, value) VALUES ('layout', \(version))",
                logger: logger
            )
            return
        }
        let text = String(buffer: stored)
        guard let version = Int(text) else {
            throw StoreError(
                code: .corruptData,
                message: "the object store's layout version \"\(text)\" is not a number"
            )
        }
        guard version <= layoutVersion else {
            throw StoreError(
                code: .incompatibleModel,
                message: "the object store's tables have layout version \(version); this release knows up to "
                    + "\(layoutVersion)"
            )
        }
    }

    func objects(entityName: String) throws -> [StoredObject] {
        let pool = pool
        return try BlockingBridge.shared.wait {
            try await pool.withConnection("cannot fetch \(entityName)") { connection in
                let rows = try await connection.query(
                    "SELECT uuid, version, data FROM tether_object WHERE entity = \(entityName) ORDER BY seq",
                    logger: PostgresPool.logger
                )
                var objects: [StoredObject] = []
                for try await (uuid, version, data) in rows.decode((String, Int64, ByteBuffer).self) {
                    objects.append(try Self.object(entityName, uuid, version, data))
                }
                return objects
            }
        }
    }

    func object(_ id: ObjectID) throws -> StoredObject? {
        let pool = pool
        return try BlockingBridge.shared.wait {
            try await pool.withConnection("cannot fetch \(id)") { connection in
                let row = try await connection.query(
                    """
                    SELECT uuid, version, data FROM tether_object
                    WHERE uuid = \(id.uuid.uuidString) AND entity = \(id.entityName)
                    """,
                    logger: PostgresPool.logger
                ).decode((String, Int64, ByteBuffer).self).first(where: { _ in true })
                return try row.map { try Self.object(id.entityName, $0.0, $0.1, $0.2) }
            }
        }
    }

    func apply(_ changes: ObjectChangeSet) throws -> [ObjectID: Int64] {
        let pool = pool
        return try BlockingBridge.shared.wait {
            do {
                return try await pool.withTransaction("save failed") { connection in
                    try await Self.apply(changes, on: connection)
                }
            } catch let error as StoreError where error.code == .duplicateID {
                throw StoreError(code: .conflict, message: "an inserted object exists: \(error.message)")
            }
        }
    }

    private static func apply(
        _ changes: ObjectChangeSet,
        on connection: PostgresConnection
    ) async throws
        -> [ObjectID: Int64]
    {
        let logger = PostgresPool.logger
        var versions: [ObjectID: Int64] = [:]
        func lockedVersion(of id: ObjectID) async throws -> Int64? {
            try await connection.query(
                "SELECT version FROM tether_object WHERE uuid = \(id.uuid.uuidString) FOR UPDATE",
                logger: logger
            ).decode(Int64.self).first(where: { _ in true })
        }
        for (id, expected) in changes.deleted {
            if let expected, try await lockedVersion(of: id) != expected {
                throw StoreError(code: .conflict, message: "\(id) changed since it was read")
            }
            try await connection.query("DELETE FROM tether_object WHERE uuid = \(id.uuid.uuidString)", logger: logger)
        }
        for (object, expected) in changes.updated {
            guard let current = try await lockedVersion(of: object.id) else {
                throw StoreError(code: .conflict, message: "\(object.id) was deleted since it was read")
            }
            if let expected, current != expected {
                throw StoreError(code: .conflict, message: "\(object.id) changed since it was read")
            }
            let data = try encode(object.values)
            let next = current + 1
            try await connection.query(
                "UPDATE tether_object SET data = \(data), version = \(next) WHERE uuid = \(object.id.uuid.uuidString)",
                logger: logger
            )
            versions[object.id] = next
        }
        for object in changes.inserted {
            let data = try encode(object.values)
            try await connection.query(
                """
                INSERT INTO tether_object (entity, uuid, version, data)
                VALUES (\(object.entityName), \(object.id.uuid.uuidString), 1, \(data))
                """,
                logger: logger
            )
            versions[object.id] = 1
        }
        return versions
    }

    private static func encode(_ values: [String: AttributeValue]) throws -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return ByteBuffer(bytes: try encoder.encode(values))
        } catch {
            throw StoreError(code: .invalidArgument, message: "values cannot be encoded", underlying: error)
        }
    }

    private static func decodeValues(_ data: ByteBuffer) throws -> [String: AttributeValue] {
        do {
            return try JSONDecoder().decode([String: AttributeValue].self, from: Data(data.readableBytesView))
        } catch {
            throw StoreError(code: .corruptData, message: "an object's values do not decode", underlying: error)
        }
    }

    private static func object(
        _ entityName: String,
        _ uuid: String,
        _ version: Int64,
        _ data: ByteBuffer
    ) throws
        -> StoredObject
    {
        guard let uuid = UUID(uuidString: uuid) else {
            throw StoreError(code: .corruptData, message: "bad object uuid \(uuid)")
        }
        return StoredObject(
            id: ObjectID(entityName: entityName, uuid: uuid),
            values: try decodeValues(data),
            version: version
        )
    }
}
