import NIOConcurrencyHelpers

/// A lock around a value that may hold non-Sendable references (delegates held weakly, engines bound to a loop).
final class LockedState<Value> {
    private let lock = NIOLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// Every access goes through the lock; the non-Sendable parts (delegate, engine) are only *used* on their own
// queue or event loop, never through this box.
extension LockedState: @unchecked Sendable {}

/// Carries a value across threads where the receiving side is the only one that uses it (a delegate called on its
/// own queue, an engine touched on its own event loop).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) {
        self.value = value
    }
}
