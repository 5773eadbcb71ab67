import Foundation

/// Store file: a property list array of the records' `PropertyListEncoder` encodings. Journal entry: a one-element
/// array in the same format, so that a record reads back the same before and after compaction.
struct PropertyListCodec<Record: Codable & Identifiable & Sendable>: FileRecordCodec
where Record.ID: Codable & Sendable {
    let format: PropertyListSerialization.PropertyListFormat
    let url: URL

    func encodeFile(_ records: [Record]) throws -> Data {
        try encode(records, what: "the records")
    }

    func decodeFile(_ data: Data) throws -> [Record] {
        do {
            try FoundationDecoderGuard.requireParsable(data)
            return try PropertyListDecoder().decode([Record].self, from: data)
        } catch {
            throw StoreError(
                code: .corruptData,
                message: "the file is not a property list array of \(Record.self)",
                url: url,
                underlying: error
            )
        }
    }

    func encodeEntry(_ record: Record) throws -> Data {
        try encode([record], what: "record \(record.id)")
    }

    func decodeEntry(_ data: Data) throws -> Record {
        try FoundationDecoderGuard.requireParsable(data)
        let records = try PropertyListDecoder().decode([Record].self, from: data)
        guard records.count == 1 else {
            throw StoreError(code: .corruptData, message: "a journal entry holds \(records.count) records", url: url)
        }
        return records[0]
    }

    private func encode(_ records: [Record], what: String) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        let data: Data
        do {
            data = try encoder.encode(records)
        } catch {
            throw StoreError(
                code: .invalidArgument,
                message: "\(what) cannot be encoded as a property list",
                url: url,
                underlying: error
            )
        }
        try PropertyListNullMarker.requireReadable(data, as: [Record].self, what: what, url: url)
        return data
    }
}
