import Foundation
import NIOCore
import PostgresNIO
public import TetherStore

/// A `RecordStore` in a PostgreSQL table, with `SQLiteStore`'s semantics and error codes.
///
/// Layout (schema version 4, see <doc:GettingStarted>): `"<table>" (seq BIGSERIAL, id TEXT PRIMARY KEY,
/// record BYTEA, version BIGINT)`, where `id` is the JSON encoding of `record.id`, `record` the JSON encoding of the
/// record (sorted keys, kept byte for byte), `seq` the insertion order and `version` a number every write raises,
/// taken from the schema's sequence `tether_version`, so that a key never has the same version twice, not even after
/// its row is deleted and inserted again. Each call is one statement or one transaction, and a call that writes
/// returns once PostgreSQL has committed the write (a write reported done survives a restart of the server). Any
/// number of stores, pools and processes may write to one table at once: the database arbitrates (there is no
/// `StoreError.Code.locked`), and ``update(_:expectedVersion:)`` reports a lost race as `StoreError.Code.conflict`.
public final class PostgresStore<Record: Codable & Identifiable & Sendable>: RecordStore, Sendable
where Record.ID: Codable & Sendable {
    /// The connections the store runs on.
    public let pool: PostgresPool
    /// The table's name.
    public let tableName: String
    /// The schema the table is in: the first schema of the connections' search path that exists when the store is
    /// opened (`public` by default).
    public let schemaName: String
    let table: String

    /// Opens the table `tableName` through `pool`, creating it or migrating its schema first.
    /// - Parameters:
    ///   - pool: The connections to use (shared with other stores).
    ///   - tableName: The table; default is the record type's name.
    /// - Throws: `StoreError.Code.invalidArgument` for an empty or over-long table name,
    ///   `StoreError.Code.incompatibleModel` when a table of that name was not made by a record store or
    ///   by a newer release, `StoreError.Code.io` when the database cannot be reached.
    public init(pool: PostgresPool, tableName: String? = nil) async throws {
        let table = tableName ?? "\(Record.self)"
        guard !table.isEmpty, table.utf8.count <= 63 else {
            throw StoreError(code: .invalidArgument, message: "table name \"\(table)\" is empty or over 63 bytes")
        }
        self.pool = pool
        self.tableName = table
        self.table = PostgresSchema.quote(table)
        self.schemaName = try await pool.withDedicatedConnection("cannot prepare table \(table)") { connection in
            try await PostgresSchema.prepare(table: table, on: connection)
        }
    }

    /// Opens the table `tableName` of the database at `url`, on a pool of its own.
    /// - Parameters:
    ///   - url: A `postgres://` URL (see ``PostgresConfiguration``).
    ///   - tableName: The table; default is the record type's name.
    /// - Throws: `StoreError.Code.invalidArgument` for a bad URL, otherwise as
    ///   ``init(pool:tableName:)``.
    public convenience init(url: String, tableName: String? = nil) async throws {
        try await self.init(pool: try PostgresPool(url: url), tableName: tableName)
    }

    /// Adds a record at the end.
    /// - Throws: `StoreError.Code.duplicateID` if a record with this id exists.
    public func insert(_ record: Record) async throws {
        let (id, data) = try RecordRowCoding<Record>.encode(record)
        let blob = ByteBuffer(bytes: data)
        let query: PostgresQuery =
            "INSERT INTO \(unescaped: table) (id, record) VALUES (\(id), \(blob)) ON CONFLICT (id) DO NOTHING RETURNING seq"
        if try await changedRows(query, "insert into \(tableName)") == 0 {
            throw StoreError(code: .duplicateID, message: "a record with id \(record.id) exists")
        }
    }

    /// Replaces the record with the same id, keeping its position.
    /// - Throws: `StoreError.Code.notFound` if no record has this id.
    public func update(_ record: Record) async throws {
        let (id, data) = try RecordRowCoding<Record>.encode(record)
        let blob = ByteBuffer(bytes: data)
        let query: PostgresQuery =
            "UPDATE \(unescaped: table) SET record = \(blob), version = version + 1 WHERE id = \(id) RETURNING seq"
        if try await changedRows(query, "update of \(tableName)") == 0 {
            throw StoreError(code: .notFound, message: "no record with id \(record.id)")
        }
    }

    /// Replaces the record with the same id if its version is still `expectedVersion` (as read with
    /// ``fetchOneWithVersion(id:)``): the check and the write are one statement, so of two writers that read the same
    /// version exactly one wins.
    /// - Parameters:
    ///   - record: The new value.
    ///   - expectedVersion: The version this writer read.
    /// - Returns: The record's new version.
    /// - Throws: `StoreError.Code.conflict` when another writer changed the record since (or deleted it and
    ///   inserted it again), `StoreError.Code.notFound` when there is no such record (any more).
    @discardableResult
    public func update(_ record: Record, expectedVersion: Int64) async throws -> Int64 {
        let (id, data) = try RecordRowCoding<Record>.encode(record)
        let blob = ByteBuffer(bytes: data)
        let table = table
        let name = tableName
        let version = try await pool.withTransaction("update of \(name)") { connection -> Int64? in
            let rows = try await connection.query(
                """
                UPDATE \(unescaped: table) SET record = \(blob), version = version + 1
                WHERE id = \(id) AND version = \(expectedVersion) RETURNING version
                """,
                logger: PostgresPool.logger
            )
            if let version = try await rows.decode(Int64.self).first(where: { _ in true }) { return version }
            let current = try await connection.query(
                "SELECT version FROM \(unescaped: table) WHERE id = \(id)",
                logger: PostgresPool.logger
            )
            let found = try await current.decode(Int64.self).first(where: { _ in true })
            guard let found else { return nil }
            throw StoreError(
                code: .conflict,
                message: "record \(record.id) of \(name) is at version \(found), not \(expectedVersion): "
                    + "another writer changed it since it was read"
            )
        }
        guard let version else { throw StoreError(code: .notFound, message: "no record with id \(record.id)") }
        return version
    }

    /// Inserts the record, or replaces the record with the same id keeping its position.
    public func upsert(_ record: Record) async throws {
        let (id, data) = try RecordRowCoding<Record>.encode(record)
        let blob = ByteBuffer(bytes: data)
        let query: PostgresQuery = """
            INSERT INTO \(unescaped: table) AS t (id, record) VALUES (\(id), \(blob))
            ON CONFLICT (id) DO UPDATE SET record = excluded.record, version = t.version + 1 RETURNING seq
            """
        _ = try await changedRows(query, "upsert into \(tableName)")
    }

    /// Deletes the record with this id.
    /// - Returns: `false` if there was nothing to delete.
    @discardableResult
    public func delete(id: Record.ID) async throws -> Bool {
        let key = try RecordRowCoding<Record>.encodeID(id)
        let query: PostgresQuery = "DELETE FROM \(unescaped: table) WHERE id = \(key) RETURNING seq"
        return try await changedRows(query, "delete from \(tableName)") > 0
    }

    /// All records in insertion order.
    public func fetchAll() async throws -> [Record] {
        let query: PostgresQuery = "SELECT record FROM \(unescaped: table) ORDER BY seq"
        let blobs = try await pool.withConnection("read of \(tableName)") { connection in
            var blobs: [ByteBuffer] = []
            for try await blob in try await connection.query(query, logger: PostgresPool.logger).decode(
                ByteBuffer.self
            ) {
                blobs.append(blob)
            }
            return blobs
        }
        let decoder = JSONDecoder()
        return try blobs.map {
            try RecordRowCoding<Record>.decode(Data($0.readableBytesView), with: decoder, table: tableName)
        }
    }

    /// The record with this id, or `nil`.
    public func fetchOne(id: Record.ID) async throws -> Record? {
        try await fetchOneWithVersion(id: id)?.record
    }

    /// The record with this id and its version (for ``update(_:expectedVersion:)``), or `nil`.
    public func fetchOneWithVersion(id: Record.ID) async throws -> (record: Record, version: Int64)? {
        let key = try RecordRowCoding<Record>.encodeID(id)
        let query: PostgresQuery = "SELECT record, version FROM \(unescaped: table) WHERE id = \(key)"
        let row = try await pool.withConnection("read of \(tableName)") { connection in
            try await connection.query(query, logger: PostgresPool.logger).decode((ByteBuffer, Int64).self)
                .first(where: { _ in true })
        }
        guard let (blob, version) = row else { return nil }
        return (
            try RecordRowCoding<Record>.decode(Data(blob.readableBytesView), with: JSONDecoder(), table: tableName),
            version
        )
    }

    /// The number of records.
    public func count() async throws -> Int {
        let query: PostgresQuery = "SELECT count(*) FROM \(unescaped: table)"
        let count = try await pool.withConnection("count of \(tableName)") { connection in
            try await connection.query(query, logger: PostgresPool.logger).decode(Int64.self).first(where: { _ in true }
            )
        }
        return Int(count ?? 0)
    }

    /// Adds `records` at the end, in this order, in one transaction: all of them or, when one fails, none.
    /// - Parameter records: The records to add.
    /// - Throws: `StoreError.Code.duplicateID` if one of their ids exists or occurs twice in
    ///   `records`, `StoreError.Code.invalidArgument` if one cannot be encoded; the store is then
    ///   unchanged.
    public func insert(contentsOf records: [Record]) async throws {
        guard !records.isEmpty else { return }
        let encoded = try records.map { try RecordRowCoding<Record>.encode($0) }
        let table = table
        // Rows go in chunks of arrays (one statement each, not one per row); `WITH ORDINALITY` keeps their order.
        let chunks = stride(from: 0, to: encoded.count, by: 10_000).map {
            Array(encoded[$0..<min($0 + 10_000, encoded.count)])
        }
        try await pool.withTransaction("bulk insert into \(tableName)") { connection in
            for chunk in chunks {
                let ids = chunk.map(\.0)
                let blobs = chunk.map { ByteBuffer(bytes: $0.blob) }
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: table) (id, record)
                    SELECT i, r FROM unnest(\(ids)::text[], \(blobs)::bytea[]) WITH ORDINALITY AS u(i, r, n) ORDER BY n
                    """,
                    logger: PostgresPool.logger
                )
            }
        }
    }

    /// Deletes the table with its records and its entry in `tether_schema`, in one transaction. Calls on a store of
    /// the table fail with `StoreError.Code.io` afterwards; opening it again makes a new, empty table.
    public func drop() async throws {
        let table = table
        let name = tableName
        try await pool.withTransaction("drop of \(name)") { connection in
            try await connection.query("DROP TABLE IF EXISTS \(unescaped: table)", logger: PostgresPool.logger)
            try await connection.query(
                "DELETE FROM tether_schema WHERE table_name = \(name)",
                logger: PostgresPool.logger
            )
        }
    }

    // MARK: - Helpers

    /// Runs a `… RETURNING` statement and counts its rows, once PostgreSQL has committed it.
    private func changedRows(_ query: PostgresQuery, _ what: String) async throws -> Int {
        try await pool.withTransaction(what) { connection in
            var count = 0
            for try await _ in try await connection.query(query, logger: PostgresPool.logger) { count += 1 }
            return count
        }
    }
}
