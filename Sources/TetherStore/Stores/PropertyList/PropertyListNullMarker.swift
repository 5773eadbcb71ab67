import Foundation

/// Foundation's property-list decoder reads the string `"$null"` as nil (its marker for a nil value), in XML and
/// binary property lists alike, so a record holding that text would make a store's file or journal unreadable
/// (found by FuzzRecordFile). ``PropertyListStore`` and ``ArchiveStore`` go through that decoder, so both refuse
/// such a record before anything is written.
enum PropertyListNullMarker {
    /// Where `data` (the `PropertyListEncoder` form of `records`) holds the marker, checks that it reads back as
    /// `[Record]`.
    /// - Throws: ``StoreError`` with ``StoreError/Code/invalidArgument`` when it does not.
    static func requireReadable<Record: Decodable>(
        _ data: Data,
        as type: [Record].Type,
        what: String,
        url: URL
    ) throws {
        guard data.range(of: Data("$null".utf8)) != nil else { return }
        do {
            _ = try PropertyListDecoder().decode(type, from: data)
        } catch {
            throw StoreError(
                code: .invalidArgument,
                message: "\(what) cannot be read back from a property list (Foundation reads the text \"$null\" "
                    + "as nil); a SQLiteStore keeps it",
                url: url,
                underlying: error
            )
        }
    }
}
