import Foundation

/// Store file: a keyed archive whose root key holds an `NSArray` of `NSDictionary` (each record's property-list
/// form, made by `PropertyListEncoder`). Journal entry: a binary property list array of one record.
struct ArchiveCodec<Record: Codable & Identifiable & Sendable>: FileRecordCodec where Record.ID: Codable & Sendable {
    let rootKey: String
    let url: URL

    func encodeFile(_ records: [Record]) throws -> Data {
        let encoded = try encodeEntries(records, what: "the records")
        let value: PlistValue
        do {
            value = try BinaryPropertyList.read(encoded)
        } catch {
            throw StoreError(code: .invalidArgument, message: "the records' property list form", url: url)
        }
        return KeyedArchive.archive(value, rootKey: rootKey)
    }

    func decodeFile(_ data: Data) throws -> [Record] {
        do {
            let root = try KeyedArchive.unarchive(data, rootKey: rootKey)
            guard case .array = root else {
                throw KeyedArchive.ArchiveError(description: "the root object is not an array")
            }
            return try PropertyListDecoder().decode([Record].self, from: BinaryPropertyList.write(root))
        } catch {
            throw StoreError(
                code: .corruptData,
                message: "the file is not a keyed archive of \(Record.self) records under \"\(rootKey)\": \(error)",
                url: url,
                underlying: error
            )
        }
    }

    func encodeEntry(_ record: Record) throws -> Data {
        try encodeEntries([record], what: "record \(record.id)")
    }

    func decodeEntry(_ data: Data) throws -> Record {
        try FoundationDecoderGuard.requireParsable(data)
        let records = try PropertyListDecoder().decode([Record].self, from: data)
        guard records.count == 1 else {
            throw StoreError(code: .corruptData, message: "a journal entry holds \(records.count) records", url: url)
        }
        return records[0]
    }

    private func encodeEntries(_ records: [Record], what: String) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
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
        // The file's records and the journal's entries are read back through `PropertyListDecoder`.
        try PropertyListNullMarker.requireReadable(data, as: [Record].self, what: what, url: url)
        return data
    }
}
