import NIOConcurrencyHelpers

/// A value guarded by a lock: one allocation holds both, and a copy of the box shares them.
///
/// Loads make several of these each; an `NSLock` per box (a Foundation object with three separately allocated
/// pthread objects on Linux) cost more to make and destroy than the locking itself.
struct LockedBox<Value>: @unchecked Sendable {
    private let storage: NIOLockedValueBox<Value>

    init(_ value: Value) { self.storage = NIOLockedValueBox(value) }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try self.storage.withLockedValue(body)
    }
}
