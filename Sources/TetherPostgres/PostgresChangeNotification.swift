import Foundation
import TetherStore

/// The notification that a record store's trigger sends for each changed row, and its decoding.
///
/// Channel: `tether_` and the 64-bit FNV-1a hash of the table's name in hex (a channel name is at most 63 bytes; a
/// table's may be as long). Payload: a JSON object `{"t": table, "o": "i"|"u"|"d", "id": key, "r": record}` where
/// `key` is the row's `id` column (the JSON of the record's id) and `r`, the record's JSON in base64, is present for
/// inserts and updates of records up to ``inlineLimit`` bytes; a larger record is read from the table when the
/// notification arrives. A row whose key is longer than ``keyLimit`` bytes is not reported: a notification's payload
/// must stay under PostgreSQL's 8,000 bytes, or the write itself would fail.
enum PostgresChangeNotification {
    /// The largest record carried in the notification itself.
    static let inlineLimit = 4096
    /// The longest key reported.
    static let keyLimit = 1024

    /// What happened to a row.
    struct Payload: Decodable, Equatable {
        /// The table's name.
        var t: String
        /// `i`, `u` or `d`.
        var o: String
        /// The row's key.
        var id: String
        /// The record's JSON in base64, when it was small enough.
        var r: String?
    }

    /// The channel the trigger of `table` notifies.
    static func channel(for table: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in table.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "tether_" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The trigger function (shared by every table; the channel is the trigger's argument).
    static let functionSQL = """
        CREATE OR REPLACE FUNCTION tether_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            body jsonb;
        BEGIN
            IF TG_OP = 'DELETE' THEN
                IF octet_length(OLD.id) <= \(keyLimit) THEN
                    body := jsonb_build_object('t', TG_TABLE_NAME, 'o', 'd', 'id', OLD.id);
                END IF;
            ELSIF octet_length(NEW.id) <= \(keyLimit) THEN
                body := jsonb_build_object(
                    't', TG_TABLE_NAME, 'o', CASE TG_OP WHEN 'INSERT' THEN 'i' ELSE 'u' END, 'id', NEW.id);
                IF octet_length(NEW.record) <= \(inlineLimit) THEN
                    body := body || jsonb_build_object('r', encode(NEW.record, 'base64'));
                END IF;
            END IF;
            IF body IS NOT NULL THEN
                PERFORM pg_notify(TG_ARGV[0], body::text);
            END IF;
            RETURN NULL;
        END
        $$
        """

    /// The change a notification reports.
    /// - Parameters:
    ///   - payload: The notification's payload.
    ///   - table: The table being watched (a payload for another table is ignored).
    ///   - fetch: Reads the current record for a key, for a change whose record was too large to carry.
    /// - Returns: `nil` for a notification about another table, or an update of a record deleted since.
    /// - Throws: `StoreError.Code.corruptData` for a payload that is not a trigger's.
    static func change<Record: Codable & Identifiable & Sendable>(
        from payload: String,
        table: String,
        fetch: (Record.ID) async throws -> Record?
    ) async throws -> RecordChange<Record>? where Record.ID: Codable & Sendable {
        let decoder = JSONDecoder()
        let body: Payload
        let id: Record.ID
        do {
            body = try decoder.decode(Payload.self, from: Data(payload.utf8))
            guard body.t == table else { return nil }
            id = try decoder.decode(Record.ID.self, from: Data(body.id.utf8))
        } catch {
            throw StoreError(
                code: .corruptData,
                message: "a change notification for table \(table) cannot be read: \(payload.prefix(200))",
                underlying: error
            )
        }
        if body.o == "d" { return .deleted(id) }
        guard body.o == "i" || body.o == "u" else {
            throw StoreError(code: .corruptData, message: "a change notification has the operation \"\(body.o)\"")
        }
        let record: Record
        if let inline = body.r {
            guard let blob = Data(base64Encoded: inline, options: .ignoreUnknownCharacters) else {
                throw StoreError(code: .corruptData, message: "a change notification's record is not base64")
            }
            record = try RecordRowCoding<Record>.decode(blob, with: decoder, table: table)
        } else {
            guard let current = try await fetch(id) else { return nil }
            record = current
        }
        return body.o == "i" ? .inserted(record) : .updated(record)
    }
}
