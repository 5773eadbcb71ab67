public import Foundation
public import GRDB

/// A ``RecordStore`` in an SQLite table through GRDB: WAL journal, `synchronous = FULL`, one transaction per call.
///
/// Layout: `CREATE TABLE "<table>" (id TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL)`, where `id` is the JSON
/// encoding of `record.id` and `record` the JSON encoding of the record (sorted keys); order is the rowid.
/// Several `SQLiteStore`s and processes may share one file under SQLite's own locking.
public final class SQLiteStore<Record: Codable & Identifiable & Sendable>: RecordStore, Sendable
where Record.ID: Codable & Sendable {
    /// The GRDB connection the store writes through.
    public let database: any DatabaseWriter
    private let table: String

    /// Opens (or creates) the database at `url` as a WAL `DatabasePool` and creates the table if needed. A new file,
    /// and with it the WAL and shared-memory files, is readable and writable by its owner only (mode 0600).
    /// - Parameters:
    ///   - url: The database file.
    ///   - tableName: The table; default is the record type's name.
    /// - Throws: ``StoreError/Code/corruptData`` when the file is not a database, ``StoreError/Code/locked``
    ///   when another connection keeps it locked, ``StoreError/Code/incompatibleModel`` when the table exists with
    ///   other columns (e.g. the seed app's `Note(cdate, content)`), ``StoreError/Code/io`` otherwise.
    public convenience init(url: URL, tableName: String? = nil) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let pool: DatabasePool
        // Notes are personal: a new file (and so its -wal and -shm) is its owner's only, as the other stores' files.
        FileIO.createPrivateIfAbsent(url)
        do {
            pool = try DatabasePool(path: url.path, configuration: configuration)
            // GRDB sets synchronous = NORMAL on the WAL writer; FULL makes every commit durable.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
        } catch {
            throw sqliteStoreError(error, "cannot open database", url: url)
        }
        try self.init(database: pool, tableName: tableName)
    }

    /// Uses an existing GRDB queue or pool, creating the table if needed.
    /// - Parameters:
    ///   - database: The connection to share.
    ///   - tableName: The table; default is the record type's name.
    /// - Throws: ``StoreError`` when the table cannot be created; ``StoreError/Code/incompatibleModel`` when a table
    ///   of that name exists without the store's `id` and `record` columns.
    public init(database: any DatabaseWriter, tableName: String? = nil) throws {
        let table = tableName ?? "\(Record.self)"
        guard !table.isEmpty else {
            throw StoreError(code: .invalidArgument, message: "empty table name")
        }
        self.database = database
        self.table = table
        var migrator = DatabaseMigrator()
        migrator.registerMigration("TetherStore v1 \(table)") { db in
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS \(table.quotedDatabaseIdentifier) "
                    + "(id TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL)"
            )
        }
        let columns: [String]
        do {
            try migrator.migrate(database)
            columns = try database.read { db in try db.columns(in: table).map { $0.name.lowercased() } }
        } catch {
            throw sqliteStoreError(error, "cannot prepare table \(table)", url: URL(fileURLWithPath: database.path))
        }
        // A table of the same name made by someone else (the seed's `Note(cdate, content)`, another app) would make
        // every later call fail: refuse it now.
        guard columns.contains("id"), columns.contains("record") else {
            throw StoreError(
                code: .incompatibleModel,
                message: "table \(table) has the columns (\(columns.joined(separator: ", "))), not (id, record): "
                    + "it was not made by a record store; convert it or choose another table name",
                url: URL(fileURLWithPath: database.path)
            )
        }
    }

    /// A store in a private in-memory database.
    /// - Parameter tableName: The table; default is the record type's name.
    /// - Returns: A new, empty store.
    public static func inMemory(tableName: String? = nil) throws -> SQLiteStore<Record> {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue()
        } catch {
            throw sqliteStoreError(error, "cannot open in-memory database", url: nil)
        }
        return try SQLiteStore(database: queue, tableName: tableName)
    }

    /// Adds a record at the end.
    /// - Throws: ``StoreError/Code/duplicateID`` if a record with this id exists.
    public func insert(_ record: Record) async throws {
        let (id, blob) = try RecordRowCoding<Record>.encode(record)
        let sql = "INSERT INTO \(table.quotedDatabaseIdentifier) (id, record) VALUES (?, ?) ON CONFLICT(id) DO NOTHING"
        let changed = try await write { db in
            try db.execute(sql: sql, arguments: [id, blob])
            return db.changesCount
        }
        if changed == 0 {
            throw StoreError(code: .duplicateID, message: "a record with id \(record.id) exists")
        }
    }

    /// Replaces the record with the same id, keeping its position.
    /// - Throws: ``StoreError/Code/notFound`` if no record has this id.
    public func update(_ record: Record) async throws {
        let (id, blob) = try RecordRowCoding<Record>.encode(record)
        let sql = "UPDATE \(table.quotedDatabaseIdentifier) SET record = ? WHERE id = ?"
        let changed = try await write { db in
            try db.execute(sql: sql, arguments: [blob, id])
            return db.changesCount
        }
        if changed == 0 {
            throw StoreError(code: .notFound, message: "no record with id \(record.id)")
        }
    }

    /// Inserts the record, or replaces the record with the same id keeping its position (rowid).
    public func upsert(_ record: Record) async throws {
        let (id, blob) = try RecordRowCoding<Record>.encode(record)
        let sql =
            "INSERT INTO \(table.quotedDatabaseIdentifier) (id, record) VALUES (?, ?) "
            + "ON CONFLICT(id) DO UPDATE SET record = excluded.record"
        _ = try await write { db in
            try db.execute(sql: sql, arguments: [id, blob])
            return db.changesCount
        }
    }

    /// Deletes the record with this id.
    /// - Returns: `false` if there was nothing to delete.
    @discardableResult
    public func delete(id: Record.ID) async throws -> Bool {
        let key = try RecordRowCoding<Record>.encodeID(id)
        let sql = "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id = ?"
        let changed = try await write { db in
            try db.execute(sql: sql, arguments: [key])
            return db.changesCount
        }
        return changed > 0
    }

    /// All records in rowid (insertion) order.
    public func fetchAll() async throws -> [Record] {
        let sql = "SELECT record FROM \(table.quotedDatabaseIdentifier) ORDER BY rowid"
        let blobs = try await read { db in try Data.fetchAll(db, sql: sql) }
        let decoder = JSONDecoder()
        return try blobs.map {
            try RecordRowCoding<Record>.decode(
                $0,
                with: decoder,
                table: table,
                url: URL(fileURLWithPath: database.path)
            )
        }
    }

    /// The record with this id, or `nil`.
    public func fetchOne(id: Record.ID) async throws -> Record? {
        let key = try RecordRowCoding<Record>.encodeID(id)
        let sql = "SELECT record FROM \(table.quotedDatabaseIdentifier) WHERE id = ?"
        let blob = try await read { db in try Data.fetchOne(db, sql: sql, arguments: [key]) }
        return try blob.map {
            try RecordRowCoding<Record>.decode(
                $0,
                with: JSONDecoder(),
                table: table,
                url: URL(fileURLWithPath: database.path)
            )
        }
    }

    /// The number of records.
    public func count() async throws -> Int {
        let sql = "SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier)"
        return try await read { db in try Int.fetchOne(db, sql: sql) ?? 0 }
    }

    /// Adds `records` at the end, in this order, in one transaction (one commit, for bulk loading): all of them or,
    /// when one fails, none.
    /// - Parameter records: The records to add.
    /// - Throws: ``StoreError/Code/duplicateID`` if one of their ids exists or occurs twice in `records`,
    ///   ``StoreError/Code/invalidArgument`` if one cannot be encoded; the store is then unchanged.
    public func insert(contentsOf records: [Record]) async throws {
        let encoded = try records.map { try RecordRowCoding<Record>.encode($0) }
        let sql = "INSERT INTO \(table.quotedDatabaseIdentifier) (id, record) VALUES (?, ?)"
        _ = try await write { db in
            let statement = try db.cachedStatement(sql: sql)
            for (index, (id, blob)) in encoded.enumerated() {
                do {
                    try statement.execute(arguments: [id, blob])
                } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                    throw StoreError(
                        code: .duplicateID,
                        message: "a record with id \(records[index].id) exists",
                        underlying: error
                    )
                }
            }
            return encoded.count
        }
    }

    // MARK: - Helpers

    private func write(_ body: @escaping @Sendable (Database) throws -> Int) async throws -> Int {
        do {
            return try await database.write(body)
        } catch let error as StoreError {
            throw error
        } catch {
            throw sqliteStoreError(error, "write to table \(table) failed", url: URL(fileURLWithPath: database.path))
        }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.read(body)
        } catch {
            throw sqliteStoreError(error, "read of table \(table) failed", url: URL(fileURLWithPath: database.path))
        }
    }
}

/// Maps a GRDB/SQLite error to a `StoreError`: busy/locked → `.locked`, corrupt/not a database → `.corruptData`,
/// anything else → `.io`.
func sqliteStoreError(_ error: any Error, _ message: String, url: URL?) -> StoreError {
    if let error = error as? StoreError { return error }
    if let error = error as? DatabaseError {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(code: .locked, message: message, url: url, underlying: error)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return StoreError(code: .corruptData, message: message, url: url, underlying: error)
        default:
            break
        }
    }
    return StoreError(code: .io, message: message, url: url, underlying: error)
}
