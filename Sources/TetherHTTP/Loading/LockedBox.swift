import NIOConcurrencyHelpers

/// A value guarded by a lock: one allocation holds both, and a copy of the box shares them.
///
/// Loads make several of these each. With an `NSLock` inside (an `NSObject` and a separately allocated mutex), a
/// box was three allocations; this is one.
struct LockedBox<Value>: @unchecked Sendable {
    private let storage: NIOLockedValueBox<Value>

    init(_ value: Value) { self.storage = NIOLockedValueBox(value) }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try self.storage.withLockedValue(body)
    }
}
