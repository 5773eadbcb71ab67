/// One change to the records of a store, as a change feed reports it (for example `PostgresStore.changes()`).
public enum RecordChange<Record: Identifiable & Sendable>: Sendable where Record.ID: Sendable {
    /// A record was inserted; its value as written.
    case inserted(Record)
    /// A record was replaced; its new value.
    case updated(Record)
    /// The record with this id was deleted.
    case deleted(Record.ID)
}

extension RecordChange: Equatable where Record: Equatable {}
extension RecordChange: Hashable where Record: Hashable {}
