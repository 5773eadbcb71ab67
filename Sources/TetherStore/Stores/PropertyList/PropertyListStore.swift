public import Foundation

/// A ``RecordStore`` in a property list file (XML or binary), the seed's `NotesList.plist`, made durable and cheap to
/// change: every change is appended to `<name>.journal` and fsynced before the call returns, and the journal is
/// folded into the file (temporary file, fsync, rename, fsync of the directory) once it outgrows it.
///
/// The file is a top-level array whose elements are the `PropertyListEncoder` encodings of the records. `.xml` keeps
/// `Date` values to whole seconds (the XML `<date>` format); `.binary` keeps them exactly.
///
/// Records are read back through Foundation's `PropertyListDecoder`, which reads the string `"$null"` as nil: a
/// record that holds that text (as a whole string value) is refused with ``StoreError/Code/invalidArgument``
/// before anything is written, rather than written to a file that would not open again. ``SQLiteStore`` keeps it.
///
/// An exclusive lock on `<name>.lock` is held for the store's lifetime: a second store on the same file, in this or
/// another process, fails with ``StoreError/Code/locked``. The lifetime ends when the actor is deallocated, after
/// its final compaction. Its last reference may be dropped on the actor's own thread a moment after your last
/// `await` on it returned, so code that drops a store and at once opens the same file again may see `.locked`
/// briefly, and should retry it.
public actor PropertyListStore<Record: Codable & Identifiable & Sendable>: RecordStore
where Record.ID: Codable & Sendable {
    private let engine: FileRecordEngine<PropertyListCodec<Record>>

    /// The store file.
    public nonisolated let url: URL

    /// Opens the store at `url`, creating it with the first write if it does not exist.
    /// - Parameters:
    ///   - url: The property list file.
    ///   - format: `.xml` (default) or `.binary`.
    /// - Throws: ``StoreError/Code/invalidArgument`` for `.openStep`, ``StoreError/Code/corruptData`` when the file or
    ///   journal cannot be decoded (both are left untouched), ``StoreError/Code/locked`` when the store is open
    ///   elsewhere, ``StoreError/Code/io`` when a file cannot be read.
    public init(url: URL, format: PropertyListSerialization.PropertyListFormat = .xml) throws {
        guard format == .xml || format == .binary else {
            throw StoreError(code: .invalidArgument, message: "property list format must be .xml or .binary", url: url)
        }
        self.engine = try FileRecordEngine(url: url, codec: PropertyListCodec(format: format, url: url))
        self.url = url
    }

    /// Adds a record at the end.
    /// - Throws: ``StoreError/Code/duplicateID`` if a record with this id exists, ``StoreError/Code/io`` if the
    ///   change could not be made durable (the store is unchanged).
    public func insert(_ record: Record) throws {
        try engine.insert(record)
    }

    /// Replaces the record with the same id, keeping its position.
    /// - Throws: ``StoreError/Code/notFound`` if no record has this id.
    public func update(_ record: Record) throws {
        try engine.update(record)
    }

    /// Inserts the record, or replaces the record with the same id keeping its position.
    public func upsert(_ record: Record) throws {
        try engine.upsert(record)
    }

    /// Deletes the record with this id.
    /// - Returns: `false` if there was nothing to delete.
    @discardableResult
    public func delete(id: Record.ID) throws -> Bool {
        try engine.delete(id: id)
    }

    /// All records in insertion order.
    public func fetchAll() -> [Record] {
        engine.records.all
    }

    /// The record with this id, or `nil`.
    public func fetchOne(id: Record.ID) -> Record? {
        engine.records[id]
    }

    /// The number of records.
    public func count() -> Int {
        engine.records.count
    }

    /// Adds `records` at the end, in this order, with one rewrite of the store file (for bulk loading): all of them
    /// or, when one fails, none.
    /// - Parameter records: The records to add.
    /// - Throws: ``StoreError/Code/duplicateID`` if one of their ids exists or occurs twice in `records`,
    ///   ``StoreError/Code/invalidArgument`` if one cannot be encoded, ``StoreError/Code/io`` if the file could not be
    ///   replaced; the store is then unchanged.
    public func insert(contentsOf records: [Record]) throws {
        try engine.insert(contentsOf: records)
    }

    /// Makes the next journal append fail (tests of `.io`).
    func breakJournalForTesting() throws {
        try engine.breakJournalForTesting()
    }

    /// Bytes written and compactions done since opening.
    var writeStatistics: (bytes: Int, compactions: Int) {
        (engine.bytesWritten, engine.compactionCount)
    }
}
