#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
public import Musl
#elseif canImport(Darwin)
public import Darwin
#endif

/// ``LockedBox``'s one allocation: the value in the header of a `ManagedBuffer`, the mutex in its one element.
///
/// One object instead of a box plus a lock object, and the value reached through a pointer: an access costs a
/// mutex call and no dynamic exclusivity check (the mutex is the exclusivity). NIO's `NIOLockedValueBox` is built the
/// same way, but it hands out its value only to a closure, and the engine's machine needs `_modify` access.
@usableFromInline
final class LockedBoxStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    /// A storage holding `value`, its mutex initialized.
    @inlinable
    static func make(_ value: Value) -> LockedBoxStorage<Value> {
        // A force cast, as NIO's own lock storage does: `create` returns the base type.
        let storage = Self.create(minimumCapacity: 1) { _ in value } as! LockedBoxStorage<Value>
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        }
        return storage
    }

    /// The value's address. The header lives inside this object, so the address holds for as long as the object
    /// does, and every ``LockedBox`` access holds the object.
    @inlinable
    var value: UnsafeMutablePointer<Value> {
        withUnsafeMutablePointerToHeader { $0 }
    }

    @inlinable
    func lock() {
        withUnsafeMutablePointerToElements { mutex in
            let result = pthread_mutex_lock(mutex)
            precondition(result == 0, "pthread_mutex_lock failed: \(result)")
        }
    }

    @inlinable
    func unlock() {
        withUnsafeMutablePointerToElements { mutex in
            let result = pthread_mutex_unlock(mutex)
            precondition(result == 0, "pthread_mutex_unlock failed: \(result)")
        }
    }

    @inlinable
    deinit {
        // The header (the value) is destroyed by `ManagedBuffer`; the element is this class's to end.
        withUnsafeMutablePointerToElements { mutex in
            _ = pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }
}
