import DequeModule
import NIOCore

/// The bytes a connection received and no read consumed yet: a contiguous ``front`` that reads are matched
/// against, and behind it the socket's later reads, each kept as NIO read it until a read needs it.
///
/// Appending every socket read to one buffer copies each one that arrives while bytes wait (several reads of one
/// batch, or a stream that runs ahead of its reader): at bulk rates that `memmove` was a fifth of the delegate
/// face's CPU. Here a large read is kept whole, and joined to the front (the same copy as before) only when a read
/// needs bytes across the boundary: a separator read or a frame (the whole next read), or a length read (only the
/// bytes it misses). A read of whatever is available takes the front alone, so a bulk stream is delivered read by
/// read, as NIO read it, with no copy. Small reads (under ``joinedBelow`` bytes) are joined at once: their copy is
/// cheap, and a chatty peer's bytes reach the reader together.
///
/// A front that readers were given slices of is never changed in place where they looked: once they let go of
/// their slices, the storage is the front's alone, but the only edge between their threads and the event loop is
/// the reference count, which the thread sanitizer cannot see, so moving the storage (to grow it) or the bytes in
/// it (to drop the consumed ones) can be reported as a race in a program that reads on another thread (it was, in
/// this package's own tests). Such a front is copied into fresh storage instead (the copy growing it makes anyway);
/// bytes are still appended in place when they fit, past every byte a reader was given.
struct ReceiveBuffer {
    /// Reads smaller than this are appended at once, not kept apart.
    static let joinedBelow = 4096

    /// An empty front that holds no socket read's storage.
    private static let empty = ByteBuffer()

    /// The bytes reads are matched against.
    private(set) var front = Self.empty
    /// Later reads from the socket, in order, not joined to `front` yet.
    private var behind = Deque<ByteBuffer>()
    /// The bytes in `behind`.
    private var behindBytes = 0
    /// Whether readers were given slices of the front's storage (it is then not moved in place).
    private(set) var frontIsLent = false

    /// Every byte held, joined or not.
    var readableBytes: Int { front.readableBytes + behindBytes }

    /// Whether bytes wait behind the front.
    var hasBytesBehind: Bool { !behind.isEmpty }

    /// A read from the socket: adopted as the front when nothing waits, appended when small, else kept whole.
    mutating func append(_ incoming: ByteBuffer) {
        var incoming = incoming
        if readableBytes == 0 {
            adoptFront(incoming)
        } else if incoming.readableBytes >= Self.joinedBelow {
            behindBytes += incoming.readableBytes
            behind.append(incoming)
        } else if behind.isEmpty {
            joinToFront(&incoming)
        } else {
            behindBytes += incoming.readableBytes
            Self.join(&incoming, to: &behind[behind.index(before: behind.endIndex)])
        }
    }

    /// Joins the next read behind the front to it: adopted whole when the front is empty (no copy); else appended,
    /// but no more than `limit` bytes of it (what a length read still misses), the rest staying behind for the reads
    /// after it. False when no read waits behind the front.
    mutating func joinNext(atMost limit: Int = .max) -> Bool {
        guard !behind.isEmpty else { return false }
        let head = behind.startIndex
        let limit = max(limit, 1)
        if front.readableBytes == 0 || behind[head].readableBytes <= limit {
            var next = behind.removeFirst()
            behindBytes -= next.readableBytes
            if front.readableBytes == 0 {
                adoptFront(next)
            } else {
                joinToFront(&next)
            }
        } else {
            var part = behind[head].readSlice(length: limit)!
            behindBytes -= part.readableBytes
            joinToFront(&part)
        }
        return true
    }

    /// Joins every byte into the front.
    mutating func joinAll() {
        while joinNext() {}
    }

    /// Puts `bytes` in front of everything held (frames decoded ahead and not taken go back).
    mutating func prepend(_ bytes: ByteBuffer) {
        var joined = bytes
        joined.writeBuffer(&front)
        front = joined
        // The bytes come back from a decoder that gave readers frames out of the same storage.
        frontIsLent = true
    }

    /// Takes every byte, joined, and leaves the buffer empty.
    mutating func takeAll() -> ByteBuffer {
        joinAll()
        defer { adoptFront(Self.empty) }
        return front
    }

    /// Reads `count` bytes off the front (`count` ≤ the front's readable bytes).
    ///
    /// A front read to its end lets go of its storage: once the reader is done with the bytes, NIO's pooled
    /// receive allocator finds the buffer unshared and reads into it again, still warm in the cache, instead of
    /// allocating a new one for every read.
    mutating func readFront(_ count: Int) -> ByteBuffer {
        let bytes = front.readSlice(length: count)!
        if front.readableBytes == 0 {
            adoptFront(Self.empty)
        } else {
            frontIsLent = true
        }
        return bytes
    }

    /// Runs `body` on the front in place (a frame read decodes from it).
    mutating func withFront<Result>(_ body: (inout ByteBuffer) -> Result) -> Result {
        // The decoder may hand readers frames sliced from the front.
        frontIsLent = true
        return body(&front)
    }

    /// Makes `buffer` the front: storage no reader was given a slice of.
    private mutating func adoptFront(_ buffer: ByteBuffer) {
        front = buffer
        frontIsLent = false
    }

    /// Appends `bytes` to the front; a lent front that must grow or drop its consumed bytes is copied into fresh
    /// storage with them instead.
    private mutating func joinToFront(_ bytes: inout ByteBuffer) {
        guard frontIsLent, front.writableBytes < bytes.readableBytes || Self.dropsConsumedBytes(front) else {
            Self.join(&bytes, to: &front)
            return
        }
        var fresh = ByteBufferAllocator().buffer(capacity: front.readableBytes + bytes.readableBytes)
        fresh.writeBuffer(&front)
        fresh.writeBuffer(&bytes)
        adoptFront(fresh)
    }

    /// Whether joining to `target` drops its consumed bytes first: when they fill half its storage.
    private static func dropsConsumedBytes(_ target: ByteBuffer) -> Bool {
        target.readerIndex > 0 && target.readerIndex >= target.capacity / 2
    }

    /// Appends `bytes` to `target`, first dropping `target`'s consumed bytes when they fill half its storage.
    private static func join(_ bytes: inout ByteBuffer, to target: inout ByteBuffer) {
        if dropsConsumedBytes(target) {
            target.discardReadBytes()
        }
        target.writeBuffer(&bytes)
    }
}
