import Foundation
import TetherStore

/// The notification that a record store's trigger sends for each changed row, and what the feed makes of it.
///
/// Channel: `tether_` and the 64-bit FNV-1a hash, in hex, of the table's schema, a zero byte and the table's name (a
/// channel name is at most 63 bytes; a schema's and a table's may be as long each). Payload: a JSON object
/// `{"s": schema, "t": table, "o": "i"|"u"|"d", "id": key, "v": version}` where `key` is the row's `id` column (the
/// JSON of the record's id) and `version` the row's `version` column as written (for a deletion, the version
/// deleted). A row whose key is longer than ``keyLimit`` bytes is not reported: a notification's payload must stay
/// under PostgreSQL's 8,000 bytes, or the write itself would fail.
///
/// Any role that can connect to the database may `NOTIFY` on any channel, so a notification is a hint, never a
/// record: the feed reads the row it names and reports what the table holds (see ``change(from:schema:table:fetch:)``).
enum PostgresChangeNotification {
    /// The longest key reported.
    static let keyLimit = 1024

    /// What happened to a row.
    struct Payload: Decodable, Equatable {
        /// The table's schema.
        var s: String
        /// The table's name.
        var t: String
        /// `i`, `u` or `d`.
        var o: String
        /// The row's key.
        var id: String
        /// The row's version as written (the deleted version, for `d`).
        var v: Int64
    }

    /// The channel the trigger of table `table` in schema `schema` notifies.
    static func channel(schema: String, table: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(schema.utf8) + [0] + Array(table.utf8) {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "tether_" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The trigger function (shared by every table of a schema; the channel is the trigger's argument).
    static let functionSQL = """
        CREATE OR REPLACE FUNCTION tether_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            body jsonb;
        BEGIN
            IF TG_OP = 'DELETE' THEN
                IF octet_length(OLD.id) <= \(keyLimit) THEN
                    body := jsonb_build_object(
                        's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'o', 'd', 'id', OLD.id, 'v', OLD.version);
                END IF;
            ELSIF octet_length(NEW.id) <= \(keyLimit) THEN
                body := jsonb_build_object(
                    's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'o', CASE TG_OP WHEN 'INSERT' THEN 'i' ELSE 'u' END,
                    'id', NEW.id, 'v', NEW.version);
            END IF;
            IF body IS NOT NULL THEN
                PERFORM pg_notify(TG_ARGV[0], body::text);
            END IF;
            RETURN NULL;
        END
        $$
        """

    /// What a notification asks the feed to report, before the table confirms it.
    enum Hint<ID: Sendable>: Sendable {
        case written(ID, version: Int64, isInsert: Bool)
        case deleted(ID, version: Int64)
    }

    /// The hint a notification gives about table `table` of schema `schema`.
    /// - Returns: `nil` for a notification about another table.
    /// - Throws: `StoreError.Code.corruptData` for a payload that is not a trigger's.
    static func hint<ID: Codable & Sendable>(
        from payload: String,
        schema: String,
        table: String
    ) throws -> Hint<ID>? {
        try keyedHint(from: payload, schema: schema, table: table)?.hint
    }

    /// The hint a notification gives about table `table` of schema `schema`, with the row's key as the `id` column
    /// holds it (the JSON of the record's id).
    /// - Returns: `nil` for a notification about another table.
    /// - Throws: `StoreError.Code.corruptData` for a payload that is not a trigger's.
    static func keyedHint<ID: Codable & Sendable>(
        from payload: String,
        schema: String,
        table: String
    ) throws -> (key: String, hint: Hint<ID>)? {
        let decoder = JSONDecoder()
        let body: Payload
        let id: ID
        do {
            body = try decoder.decode(Payload.self, from: Data(payload.utf8))
            guard body.s == schema, body.t == table else { return nil }
            id = try decoder.decode(ID.self, from: Data(body.id.utf8))
        } catch {
            throw StoreError(
                code: .corruptData,
                message:
                    "a change notification for table \(table) cannot be read: \(String(payload.prefix(200)).debugDescription)",
                underlying: error
            )
        }
        switch body.o {
        case "i", "u": return (body.id, .written(id, version: body.v, isInsert: body.o == "i"))
        case "d": return (body.id, .deleted(id, version: body.v))
        default:
            throw StoreError(code: .corruptData, message: "a change notification has the operation \"\(body.o)\"")
        }
    }

    /// The change a notification reports, as the table confirms it.
    ///
    /// The row is read when the notification arrives: an insert or an update is reported with the row as the table
    /// holds it then, if its version is the notified one or a later one (a later write's own notification follows);
    /// a deletion is reported if the row is gone. Nothing else is reported: a row that is gone by the time its
    /// insert or update is read (its deletion follows), a row whose version is older than notified, or a row that
    /// exists when its deletion is read (inserted again since, or a forged notification). So a notification that
    /// the trigger did not send can at most make the feed report the table's true state again.
    /// - Parameters:
    ///   - payload: The notification's payload.
    ///   - schema: The schema of the table being watched.
    ///   - table: The table being watched (a payload for another table is ignored).
    ///   - fetch: Reads the current record and version for a key.
    /// - Returns: `nil` for a notification about another table, or one the table does not confirm.
    /// - Throws: `StoreError.Code.corruptData` for a payload that is not a trigger's; `fetch`'s error.
    static func change<Record: Codable & Identifiable & Sendable>(
        from payload: String,
        schema: String,
        table: String,
        fetch: (Record.ID) async throws -> (record: Record, version: Int64)?
    ) async throws -> RecordChange<Record>? where Record.ID: Codable & Sendable {
        guard let parsed: Hint<Record.ID> = try hint(from: payload, schema: schema, table: table) else { return nil }
        switch parsed {
        case .written(let id, _, _), .deleted(let id, _):
            return change(for: parsed, current: try await fetch(id))
        }
    }

    /// The change `hint` reports when the table holds `current` for its row (`nil`: no such row): the rules of
    /// ``change(from:schema:table:fetch:)``.
    static func change<Record: Codable & Identifiable & Sendable>(
        for hint: Hint<Record.ID>,
        current: (record: Record, version: Int64)?
    ) -> RecordChange<Record>? {
        switch hint {
        case .written(_, let version, let isInsert):
            guard let (record, currentVersion) = current, currentVersion >= version else { return nil }
            return isInsert ? .inserted(record) : .updated(record)
        case .deleted(let id, _):
            return current == nil ? .deleted(id) : nil
        }
    }
}
