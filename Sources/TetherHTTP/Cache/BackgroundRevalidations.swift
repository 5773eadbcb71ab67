/// The background revalidations (`stale-while-revalidate`) of one cache that are under way, by key, and the tasks
/// waiting for there to be none.
struct BackgroundRevalidations {
    var keys: Set<String> = []
    var waiters: [CheckedContinuation<Void, Never>] = []

    /// Ends the revalidation of `key` and returns the waiters to resume: all of them once none is under way.
    mutating func end(_ key: String) -> [CheckedContinuation<Void, Never>] {
        self.keys.remove(key)
        guard self.keys.isEmpty else { return [] }
        defer { self.waiters = [] }
        return self.waiters
    }
}
