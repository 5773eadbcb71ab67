/// Records in insertion order with an index by id; deletions leave holes that are squeezed out once they
/// outnumber the records, so every operation is amortised O(1).
struct OrderedRecords<Record: Identifiable> {
    private var slots: [Record?] = []
    private var positions: [Record.ID: Int] = [:]
    private var holes = 0

    init() {}

    init(_ records: [Record]) {
        for record in records {
            precondition(positions[record.id] == nil, "duplicate id \(record.id)")
            positions[record.id] = slots.count
            slots.append(record)
        }
    }

    var count: Int { positions.count }

    var all: [Record] { slots.compactMap { $0 } }

    func contains(_ id: Record.ID) -> Bool { positions[id] != nil }

    subscript(id: Record.ID) -> Record? {
        guard let position = positions[id] else { return nil }
        return slots[position]
    }

    /// Inserts or replaces; returns the previous value.
    @discardableResult
    mutating func put(_ record: Record) -> Record? {
        if let position = positions[record.id] {
            let old = slots[position]
            slots[position] = record
            return old
        }
        positions[record.id] = slots.count
        slots.append(record)
        return nil
    }

    /// Removes; returns the removed value.
    @discardableResult
    mutating func remove(_ id: Record.ID) -> Record? {
        guard let position = positions.removeValue(forKey: id) else { return nil }
        let old = slots[position]
        slots[position] = nil
        holes += 1
        if holes > 32 && holes > positions.count {
            squeeze()
        }
        return old
    }

    private mutating func squeeze() {
        slots = slots.filter { $0 != nil }
        positions.removeAll(keepingCapacity: true)
        for (position, record) in slots.enumerated() {
            if let record { positions[record.id] = position }
        }
        holes = 0
    }
}

extension OrderedRecords: Sendable where Record: Sendable, Record.ID: Sendable {}
