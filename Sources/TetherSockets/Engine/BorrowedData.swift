import Foundation
@_spi(CustomByteBufferAllocator) import NIOCore
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A delegate's `Data` written without a copy: a `ByteBuffer` over the `Data`'s own bytes.
///
/// NIO writes only `ByteBuffer`s, and `ByteBuffer(data:)` copies. A large write instead becomes a buffer that takes the
/// `Data`'s bytes as its storage through NIO's custom-allocator SPI, while a registry keeps the `Data` alive; the
/// allocator's `deallocate`, called when the last buffer over those bytes is gone, drops it from the registry.
///
/// Why the bytes cannot change or vanish under the write:
/// - A `Data` larger than its inline form keeps its bytes in one heap storage object that does not move while a
///   reference to it is held; the registry holds one (a `Data` value), and a caller that mutates its own `Data`
///   afterwards copies first (copy on write), as with any `Data`.
/// - Nothing writes into a buffer on the write path (the engine's write queue and NIO only move its reader index).
///   Were a write ever to grow the buffer, `reallocate` moves the bytes into fresh memory and lets the `Data` go.
///
/// Small writes are copied: below ``minimumCount`` the copy costs less than the registry's lock.
///
/// - Note: This uses `@_spi(CustomByteBufferAllocator)` of NIOCore (`ByteBuffer(takingOwnershipOf:allocator:)`), an
///   interface NIO may change in a minor release; `BorrowedDataTests` fail if its contract changes.
enum BorrowedData {
    /// Writes at least this long are not copied.
    static let minimumCount = 16_384

    /// One borrowed storage: the `Data` that keeps it alive and how many buffers were made over it.
    struct Hold {
        var data: Data
        var buffers: Int
    }

    /// The borrowed storages by base address.
    static let holds = LockedBox<[UInt: Hold]>([:])

    /// The allocator of borrowed buffers: `malloc`'s family for memory it allocates, the registry for borrowed bytes.
    static let allocator = ByteBufferAllocator(
        allocate: { size in malloc(size) },
        reallocate: { pointer, oldSize, newSize in
            guard let pointer else { return malloc(newSize) }
            guard let released = BorrowedData.release(pointer) else { return realloc(pointer, newSize) }
            // `released` may be the last reference to the bytes: they are copied before it goes.
            let fresh = malloc(newSize)
            withExtendedLifetime(released) {
                fresh?.copyMemory(from: pointer, byteCount: Int(min(oldSize, newSize)))
            }
            return fresh
        },
        deallocate: { pointer in
            if BorrowedData.release(pointer) == nil { free(pointer) }
        },
        copy: { destination, source, count in
            destination.copyMemory(from: source, byteCount: Int(count))
        }
    )

    /// The bytes of `data` as a buffer to write: over the `Data`'s own bytes when it is large enough, else a copy.
    static func buffer(_ data: Data) -> ByteBuffer {
        guard data.count >= minimumCount else { return ByteBuffer(data: data) }
        // The pointer outlives the closure: valid because the registry keeps `data`, whose storage does not move
        // (see the type's documentation).
        let base = data.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
        holds.withLock { holds in
            holds[UInt(bitPattern: base), default: Hold(data: data, buffers: 0)].buffers += 1
        }
        return ByteBuffer(
            takingOwnershipOf: UnsafeMutableRawBufferPointer(start: base, count: data.count),
            allocator: allocator
        )
    }

    /// Drops one buffer's hold on the borrowed bytes at `pointer`, and returns the `Data` that held them (which may be
    /// their last reference: keep it while the bytes are read); nil when `pointer` is not borrowed.
    static func release(_ pointer: UnsafeMutableRawPointer) -> Data? {
        let key = UInt(bitPattern: pointer)
        return holds.withLock { holds in
            guard let hold = holds[key] else { return nil }
            if hold.buffers == 1 {
                holds[key] = nil
            } else {
                holds[key]!.buffers -= 1
            }
            return hold.data
        }
    }

    /// Whether a buffer over `data`'s bytes is alive (for tests).
    static func isBorrowed(_ data: Data) -> Bool {
        let key = data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        return holds.withLock { $0[key] != nil }
    }
}
