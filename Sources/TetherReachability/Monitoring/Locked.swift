import Foundation

/// A value behind a lock (the package supports macOS 13, where `Synchronization.Mutex` is not available).
final class Locked<Value> {
    private let lock = NSLock()
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

// Every access to `value` goes through `lock`.
extension Locked: @unchecked Sendable {}
