import Foundation
import PostgresNIO
import TetherStore

/// The versioned layout of a ``PostgresStore``'s table, created on first open and migrated in place.
///
/// `tether_schema(table_name, version)` records the version of each table. Version 1 is
/// `(seq BIGSERIAL, id TEXT PRIMARY KEY, record BYTEA)`; version 2 adds `version BIGINT NOT NULL DEFAULT 1`, the
/// optimistic-locking counter that every write increments; version 3 adds the trigger `tether_notify` that reports
/// every inserted, updated and deleted row with `pg_notify` (see ``PostgresChangeNotification``), committed or rolled
/// back with the write; version 4 takes every row's `version` from the schema's sequence `tether_version` (a trigger
/// `tether_version` sets it on each insert and update, whoever writes), so that a version never repeats for a key,
/// not even after the row is deleted and inserted again, and moves the notifications to a channel of the table's
/// schema and name. Schema changes take a transaction-scoped advisory lock, so that processes opening the same
/// database at once migrate it once.
enum PostgresSchema {
    /// The version this release writes.
    static let currentVersion = 4

    /// The advisory lock key of schema changes (any constant; "tether" in ASCII).
    static let lockKey: Int64 = 0x74_6574_6865_72

    /// The function of the trigger `tether_version`: each written row gets the next number of its schema's
    /// sequence as its version.
    static let versionFunctionSQL = """
        CREATE OR REPLACE FUNCTION tether_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.version := nextval(format('%I.tether_version', TG_TABLE_SCHEMA));
            RETURN NEW;
        END
        $$
        """

    /// The statements that move table `table` of schema `schema` from version `version - 1` to `version`.
    static func migration(to version: Int, table: String, schema: String) -> [String] {
        let quoted = quote(table)
        let channel = PostgresChangeNotification.channel(schema: schema, table: table)
        return switch version {
        case 1:
            [
                "CREATE TABLE \(quoted) (seq BIGSERIAL NOT NULL, id TEXT PRIMARY KEY, record BYTEA NOT NULL)",
                "CREATE UNIQUE INDEX ON \(quoted) (seq)",
            ]
        case 2:
            ["ALTER TABLE \(quoted) ADD COLUMN version BIGINT NOT NULL DEFAULT 1"]
        case 3:
            [
                PostgresChangeNotification.functionSQL,
                """
                CREATE TRIGGER tether_notify AFTER INSERT OR UPDATE OR DELETE ON \(quoted)
                FOR EACH ROW EXECUTE FUNCTION tether_notify_change('\(channel)')
                """,
            ]
        case 4:
            [
                "CREATE SEQUENCE IF NOT EXISTS tether_version",
                // Above every version the table holds, so that no later write repeats one.
                """
                SELECT setval('tether_version', GREATEST(
                    (SELECT last_value FROM tether_version), (SELECT coalesce(max(version), 1) FROM \(quoted))))
                """,
                versionFunctionSQL,
                """
                CREATE TRIGGER tether_version BEFORE INSERT OR UPDATE ON \(quoted)
                FOR EACH ROW EXECUTE FUNCTION tether_next_version()
                """,
                PostgresChangeNotification.functionSQL,
                "DROP TRIGGER tether_notify ON \(quoted)",
                """
                CREATE TRIGGER tether_notify AFTER INSERT OR UPDATE OR DELETE ON \(quoted)
                FOR EACH ROW EXECUTE FUNCTION tether_notify_change('\(channel)')
                """,
            ]
        default:
            []
        }
    }

    /// Creates or migrates `table` up to `target` in one transaction.
    /// - Returns: The schema the table is in (the connection's current schema).
    /// - Throws: `StoreError.Code.incompatibleModel` when the table was made by a newer release or not by a record
    ///   store; `StoreError.Code.invalidArgument` when the connection's search path names no schema that exists;
    ///   `StoreError.Code.io` when a statement fails.
    @discardableResult
    static func prepare(
        table: String,
        upTo target: Int = currentVersion,
        on connection: PostgresConnection
    ) async throws -> String {
        let logger = PostgresPool.logger
        return try await PostgresPool.transaction(on: connection) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            let current = try await connection.query("SELECT current_schema()::text", logger: logger)
            guard let schema = try await current.decode(String?.self).first(where: { _ in true }) ?? nil else {
                throw StoreError(
                    code: .invalidArgument,
                    message: "the search path of the database's connections names no schema that exists"
                )
            }
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS tether_schema (table_name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
                logger: logger
            )
            var version = 0
            let rows = try await connection.query(
                "SELECT version FROM tether_schema WHERE table_name = \(table)",
                logger: logger
            )
            if let stored = try await rows.decode(Int32.self).first(where: { _ in true }) {
                version = Int(stored)
            } else {
                version = try await unregisteredVersion(of: table, on: connection)
            }
            guard version <= currentVersion else {
                throw StoreError(
                    code: .incompatibleModel,
                    message: "table \(table) has schema version \(version); this release knows up to \(currentVersion)"
                )
            }
            guard version < target else { return schema }
            for step in (version + 1)...target {
                for statement in migration(to: step, table: table, schema: schema) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            let newVersion = Int32(target)
            try await connection.query(
                """
                INSERT INTO tether_schema (table_name, version) VALUES (\(table), \(newVersion))
                ON CONFLICT (table_name) DO UPDATE SET version = excluded.version
                """,
                logger: logger
            )
            return schema
        }
    }

    /// The version of a table that `tether_schema` does not list: 0 when there is no such table; an
    /// `StoreError.Code.incompatibleModel` error when a table of that name was made by someone else.
    private static func unregisteredVersion(of table: String, on connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.query(
            """
            SELECT column_name::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = \(table) ORDER BY ordinal_position
            """,
            logger: PostgresPool.logger
        )
        var columns: [String] = []
        for try await name in rows.decode(String.self) { columns.append(name) }
        guard !columns.isEmpty else { return 0 }
        throw StoreError(
            code: .incompatibleModel,
            message: "table \(table) has the columns (\(columns.joined(separator: ", "))) and was not made by a "
                + "record store; convert it or choose another table name"
        )
    }

    /// `name` as a quoted SQL identifier.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
