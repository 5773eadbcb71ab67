public import NIOConcurrencyHelpers

/// The one lock-protected box of the package (public for inlining; the target is not a product): a value behind a
/// lock, read and changed only inside `withLock`.
///
/// `LockedBox` is `Sendable` only when its value is: a box of non-Sendable state stays in the isolation domain it
/// was made in, and the compiler says so. Where a non-Sendable value must cross (a delegate called on its own
/// queue, a handler touched on its own event loop), wrap it in ``UncheckedSendableBox`` and say why in a
/// `// Sendable:` comment at that place.
public final class LockedBox<Value> {
    @usableFromInline let lock = NIOLock()
    @usableFromInline var value: Value

    /// A box holding `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// The value, read or changed in place under the lock for the duration of one access: `box.locked.count += 1`
    /// takes the lock once. For a value that one owner reaches often and another thread now and then.
    @inlinable
    public var locked: Value {
        _read {
            lock.lock()
            defer { lock.unlock() }
            yield value
        }
        _modify {
            lock.lock()
            defer { lock.unlock() }
            yield &value
        }
    }

    /// The value without the lock, for an owner that has not shared the box with another thread: the same storage,
    /// so that one type can take the lock only when it shares the box.
    @inlinable
    public var unlocked: Value {
        _read { yield value }
        _modify { yield &value }
    }

    /// Runs `body` with the value, under the lock. Do not call back into code that takes the same lock.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// Sendable: every access to `value` goes through `lock`, and the value itself is Sendable.
extension LockedBox: @unchecked Sendable where Value: Sendable {}
