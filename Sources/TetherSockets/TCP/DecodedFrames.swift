public import NIOCore
public import TetherConcurrency
public import TetherCore

/// Frames decoded ahead of an iterator: filled on the event loop, taken by the iterator's task, and given back (as
/// the bytes they were decoded from) when another read reaches the connection first.
// Sendable: `state` holds every mutable part behind its lock; the codec state and frames inside are handed from
// the event loop to the iterator's task through that lock only.
@usableFromInline
final class DecodedFrames<Codec: FrameCodec>: ReclaimableFrames, @unchecked Sendable {
    /// The most frames decoded ahead in one step.
    static var limit: Int { 1_024 }

    /// One frame, the codec's state after it, and how many bytes it took.
    @usableFromInline
    struct Decoded {
        @usableFromInline var frame: Codec.Frame
        @usableFromInline var codec: Codec
        @usableFromInline var length: Int
    }

    @usableFromInline
    struct State {
        @usableFromInline var frames = CircularBuffer<Decoded>()
        /// The bytes of the frames not taken yet, in order.
        @usableFromInline var bytes = ByteBuffer()
    }

    @usableFromInline let state = LockedBox(State())

    @usableFromInline init() {}

    /// The next decoded frame and the codec's state after it.
    @inlinable
    func take() -> Decoded? {
        state.withLock { state in
            guard let next = state.frames.popFirst() else { return nil }
            state.bytes.moveReaderIndex(forwardBy: next.length)
            return next
        }
    }

    /// On the loop: replaces the contents (the previous ones were all taken or reclaimed).
    func fill(_ frames: CircularBuffer<Decoded>, bytes: ByteBuffer) {
        state.withLock { state in
            state.frames = frames
            state.bytes = bytes
        }
    }

    func reclaim() -> ByteBuffer? {
        state.withLock { state in
            state.frames.removeAll()
            defer { state.bytes = ByteBuffer() }
            return state.bytes.readableBytes > 0 ? state.bytes : nil
        }
    }
}
