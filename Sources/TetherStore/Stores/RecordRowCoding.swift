package import Foundation

/// How the database stores (SQLite, PostgreSQL) keep a record in a row: the JSON of its id as the key, the JSON of the
/// record (keys sorted) as the value. One place, so that both stores read and refuse the same things.
package enum RecordRowCoding<Record: Codable & Identifiable> where Record.ID: Codable {
    /// The key and the value of `record`'s row.
    /// - Throws: `StoreError(.invalidArgument)` when the record or its id cannot be encoded.
    package static func encode(_ record: Record) throws -> (id: String, blob: Data) {
        do {
            let encoder = makeEncoder()
            return (String(decoding: try encoder.encode(record.id), as: UTF8.self), try encoder.encode(record))
        } catch {
            throw StoreError(
                code: .invalidArgument,
                message: "record \(record.id) cannot be encoded",
                underlying: error
            )
        }
    }

    /// The key of the row of the record with `id`.
    /// - Throws: `StoreError(.invalidArgument)` when the id cannot be encoded.
    package static func encodeID(_ id: Record.ID) throws -> String {
        do {
            return String(decoding: try makeEncoder().encode(id), as: UTF8.self)
        } catch {
            throw StoreError(code: .invalidArgument, message: "id \(id) cannot be encoded", underlying: error)
        }
    }

    /// The record of a row's value.
    /// - Throws: `StoreError(.corruptData)` naming `table` (and the database file `url`, if any).
    package static func decode(
        _ blob: Data,
        with decoder: JSONDecoder,
        table: String,
        url: URL? = nil
    ) throws -> Record {
        do {
            return try decoder.decode(Record.self, from: blob)
        } catch {
            throw StoreError(
                code: .corruptData,
                message: "a row of table \(table) cannot be decoded as \(Record.self)",
                url: url,
                underlying: error
            )
        }
    }

    private static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
