/// The one lock-protected box of the package (public for inlining; the target is not a product): a value behind a
/// lock, read and changed only inside `withLock`.
///
/// `LockedBox` is `Sendable` only when its value is: a box of non-Sendable state stays in the isolation domain it
/// was made in, and the compiler says so. Where a non-Sendable value must cross (a delegate called on its own
/// queue, a handler touched on its own event loop), wrap it in ``UncheckedSendableBox`` and say why in a
/// `// Sendable:` comment at that place.
public struct LockedBox<Value> {
    @usableFromInline let storage: LockedBoxStorage<Value>

    /// A box holding `value`.
    @inlinable
    public init(_ value: Value) {
        self.storage = LockedBoxStorage.make(value)
    }

    /// The value, read or changed in place under the lock for the duration of one access: `box.locked.count += 1`
    /// takes the lock once. For a value that one owner reaches often and another thread now and then.
    @inlinable
    public var locked: Value {
        _read {
            storage.lock()
            defer { storage.unlock() }
            yield storage.value.pointee
        }
        nonmutating _modify {
            storage.lock()
            defer { storage.unlock() }
            yield &storage.value.pointee
        }
    }

    /// The value without the lock, for an owner that has not shared the box with another thread: the same storage,
    /// so that one type can take the lock only when it shares the box.
    @inlinable
    public var unlocked: Value {
        _read { yield storage.value.pointee }
        nonmutating _modify { yield &storage.value.pointee }
    }

    /// Runs `body` with the value, under the lock. Do not call back into code that takes the same lock.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        storage.lock()
        defer { storage.unlock() }
        return try body(&storage.value.pointee)
    }
}

// Sendable: every access to the value goes through the lock (or, `unlocked`, stays with the one owner that has not
// shared the box), and the value itself is Sendable.
extension LockedBox: @unchecked Sendable where Value: Sendable {}
