import NIOConcurrencyHelpers
import NIOCore
public import TetherCore

extension TCPConnection {
    /// The frames of the stream, decoded by `codec`, as an async sequence.
    ///
    /// Each iteration step is one read of the connection, served in order with other reads: frames and direct
    /// reads may be interleaved between steps, and bytes after a frame stay in the connection's buffer. The
    /// sequence ends (`nil`) at the end of the stream on a frame boundary.
    ///
    /// ```swift
    /// for try await frame in connection.frames(STXFrameCodec()) {
    ///     print(frame.destination, frame.payload.readableBytes)
    /// }
    /// ```
    /// - Parameters:
    ///   - codec: cuts the frames from the stream; each iteration continues from the state the last one left.
    ///   - timeout: the longest wait for each frame that is not already buffered, nil for none. A header that
    ///     announced bytes that never come then ends the iteration with `.readTimeout` instead of holding it for
    ///     ever; the partial frame's bytes stay buffered.
    /// - Throws (from the iterator): the codec's `FramingError` — the offending bytes stay buffered, so
    ///   ``readAvailable(maxLength:timeout:)`` can drain them — `.truncatedFrame` when the stream ends inside a
    ///   frame, `.readTimeout` after `timeout`, or the ``GCDAsyncSocketError`` that ended the connection.
    public func frames<Codec: FrameCodec>(_ codec: Codec, timeout: Duration? = nil) -> FrameSequence<Codec> {
        FrameSequence(connection: self, codec: codec, timeout: timeout)
    }

    /// Encodes `frame` with `codec` and writes it.
    /// - Throws: the codec's `FramingError` (nothing is written), or what ``write(_:timeout:)`` throws.
    public func write<Codec: FrameCodec>(
        _ frame: Codec.Frame,
        using codec: Codec,
        timeout: Duration? = nil
    )
        async throws
    {
        var buffer = channel.allocator.buffer(capacity: 64)
        try codec.encode(frame, into: &buffer)
        try await write(buffer, timeout: timeout)
    }

    /// Reads one frame; returns it with the codec's new state (resynchronisation counters). Frames after it that
    /// are already buffered are decoded into `batch`, for the iterator to take without a hop.
    @usableFromInline
    func readFrame<Codec: FrameCodec>(
        _ codec: Codec,
        batch: DecodedFrames<Codec>? = nil,
        timeout: Duration? = nil
    ) async throws -> (Codec.Frame?, Codec) {
        let timeout = timeout.map { TimeAmount($0) }
        let idBox = OperationID()
        let engine = self.engine
        let loop = channel.eventLoop
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Codec.Frame?, Codec), any Error>) in
                loop.execute {
                    let operation = CodecFrameRead(codec: codec, batch: batch, continuation: continuation)
                    if idBox.isCancelled {
                        operation.fail(CancellationError())
                        return
                    }
                    idBox.set(
                        engine.value.enqueueRead(.available(maxLength: 0), timeout: timeout, waiter: .frame(operation))
                    )
                }
            }
        } onCancel: {
            loop.execute {
                if let id = idBox.cancel() { engine.value.cancelRead(id: id, error: CancellationError()) }
            }
        }
    }

    /// The frames of a connection; see ``TCPConnection/frames(_:timeout:)``.
    public struct FrameSequence<Codec: FrameCodec>: AsyncSequence, Sendable {
        /// A decoded frame.
        public typealias Element = Codec.Frame
        let connection: TCPConnection
        let codec: Codec
        let timeout: Duration?

        /// Starts iterating with a fresh copy of the codec.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(connection: connection, codec: codec, timeout: timeout)
        }

        /// Iterates the frames.
        ///
        /// A step that reaches the event loop also decodes the frames already buffered behind the one it returns
        /// (up to a fixed limit); the next steps take those without leaving the task's thread. Frames are
        /// handed over in order and nothing is lost: when another read reaches the connection first, the bytes of
        /// the frames not yet taken go back to the front of the connection's buffer.
        public struct AsyncIterator: AsyncIteratorProtocol {
            @usableFromInline let connection: TCPConnection
            /// The codec as the iteration left it (e.g. `STXFrameCodec.discardedByteCount` after resynchronising).
            public var codec: Codec { currentCodec }
            @usableFromInline var currentCodec: Codec
            @usableFromInline var finished = false
            // Taken in the caller's module (inlinable, so specialized for its codec): a step that does not hop
            // costs a lock and a pop, not generic metadata lookups.
            @usableFromInline let batch = DecodedFrames<Codec>()
            @usableFromInline let timeout: Duration?

            init(connection: TCPConnection, codec: Codec, timeout: Duration?) {
                self.connection = connection
                self.currentCodec = codec
                self.timeout = timeout
            }

            /// The next frame; nil at the end of the stream on a frame boundary.
            /// - Throws: `FramingError` (bytes kept), `.truncatedFrame` at a mid-frame end, or the connection's error.
            @inlinable
            public mutating func next() async throws -> Codec.Frame? {
                guard !finished else { return nil }
                if let decoded = batch.take() {
                    currentCodec = decoded.codec
                    return decoded.frame
                }
                let (frame, codec) = try await connection.readFrame(currentCodec, batch: batch, timeout: timeout)
                currentCodec = codec
                if frame == nil { finished = true }
                return frame
            }
        }
    }
}
