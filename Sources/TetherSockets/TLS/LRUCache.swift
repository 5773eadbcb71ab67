/// A bounded map that drops its least recently used entry to make room: the TLS contexts' cache.
struct LRUCache<Key: Hashable, Value> {
    private var entries: [Key: (value: Value, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0
    /// The most entries kept (at least 1).
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The value for `key`, which becomes the most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let entry = entries[key] else { return nil }
        clock += 1
        entries[key] = (entry.value, clock)
        return entry.value
    }

    /// Stores `value` as the most recently used; drops the least recently used entry when full.
    mutating func store(_ value: Value, for key: Key) {
        clock += 1
        if entries[key] == nil, entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        {
            entries[oldest] = nil
        }
        entries[key] = (value, clock)
    }

    /// Whether `key` is cached (does not count as a use).
    func contains(_ key: Key) -> Bool { entries[key] != nil }

    /// How many entries are kept.
    var count: Int { entries.count }
}

extension LRUCache: Sendable where Key: Sendable, Value: Sendable {}
