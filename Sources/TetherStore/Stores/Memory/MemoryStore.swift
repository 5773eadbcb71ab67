/// A ``RecordStore`` that keeps its records in memory only, for tests and previews.
public actor MemoryStore<Record: Codable & Identifiable & Sendable>: RecordStore where Record.ID: Codable & Sendable {
    private var records: OrderedRecords<Record>

    /// Creates a store holding `records` in this order.
    /// - Parameter records: The initial records; their ids must be unique (precondition).
    public init(_ records: [Record] = []) {
        self.records = OrderedRecords(records)
    }

    /// Adds a record at the end.
    /// - Throws: ``StoreError/Code/duplicateID`` if a record with this id exists.
    public func insert(_ record: Record) throws {
        guard !records.contains(record.id) else {
            throw StoreError(code: .duplicateID, message: "a record with id \(record.id) exists")
        }
        records.put(record)
    }

    /// Replaces the record with the same id, keeping its position.
    /// - Throws: ``StoreError/Code/notFound`` if no record has this id.
    public func update(_ record: Record) throws {
        guard records.contains(record.id) else {
            throw StoreError(code: .notFound, message: "no record with id \(record.id)")
        }
        records.put(record)
    }

    /// Inserts the record, or replaces the record with the same id keeping its position.
    public func upsert(_ record: Record) {
        records.put(record)
    }

    /// Deletes the record with this id.
    /// - Returns: `false` if there was nothing to delete.
    @discardableResult
    public func delete(id: Record.ID) -> Bool {
        records.remove(id) != nil
    }

    /// All records in insertion order.
    public func fetchAll() -> [Record] {
        records.all
    }

    /// The record with this id, or `nil`.
    public func fetchOne(id: Record.ID) -> Record? {
        records[id]
    }

    /// The number of records.
    public func count() -> Int {
        records.count
    }
}
