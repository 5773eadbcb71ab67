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
    /// - Throws (from the iterator): the codec's `FramingError` — the offending bytes stay buffered, so
    ///   ``readAvailable(maxLength:timeout:)`` can drain them — `.truncatedFrame` when the stream ends inside a
    ///   frame, or the ``AsyncSocketError`` that ended the connection.
    public func frames<Codec: FrameCodec>(_ codec: Codec) -> FrameSequence<Codec> {
        FrameSequence(connection: self, codec: codec)
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

    /// Reads one frame; returns it with the codec's new state (resynchronisation counters).
    func readFrame<Codec: FrameCodec>(_ codec: Codec) async throws -> (Codec.Frame?, Codec) {
        let idBox = OperationID()
        let engine = self.engine
        let loop = channel.eventLoop
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Codec.Frame?, Codec), any Error>) in
                loop.execute {
                    let operation = CodecFrameRead(codec: codec, continuation: continuation)
                    if idBox.isCancelled {
                        operation.fail(CancellationError())
                        return
                    }
                    idBox.set(
                        engine.value.enqueueRead(.available(maxLength: 0), timeout: nil, waiter: .frame(operation))
                    )
                }
            }
        } onCancel: {
            loop.execute {
                if let id = idBox.cancel() { engine.value.cancelRead(id: id, error: CancellationError()) }
            }
        }
    }

    /// The frames of a connection; see ``TCPConnection/frames(_:)``.
    public struct FrameSequence<Codec: FrameCodec>: AsyncSequence, Sendable {
        /// A decoded frame.
        public typealias Element = Codec.Frame
        let connection: TCPConnection
        let codec: Codec

        /// Starts iterating with a fresh copy of the codec.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(connection: connection, codec: codec)
        }

        /// Iterates the frames.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let connection: TCPConnection
            /// The codec as the iteration left it (e.g. `STXFrameCodec.discardedByteCount` after resynchronising).
            public private(set) var codec: Codec
            var finished = false

            /// The next frame; nil at the end of the stream on a frame boundary.
            /// - Throws: `FramingError` (bytes kept), `.truncatedFrame` at a mid-frame end, or the connection's error.
            public mutating func next() async throws -> Codec.Frame? {
                guard !finished else { return nil }
                let (frame, codec) = try await connection.readFrame(self.codec)
                self.codec = codec
                if frame == nil { finished = true }
                return frame
            }
        }
    }
}

/// A frame read with a concrete codec, run on the event loop.
final class CodecFrameRead<Codec: FrameCodec>: FrameReadOperation {
    private var codec: Codec
    private var continuation: CheckedContinuation<(Codec.Frame?, Codec), any Error>?

    init(codec: Codec, continuation: CheckedContinuation<(Codec.Frame?, Codec), any Error>) {
        self.codec = codec
        self.continuation = continuation
    }

    func attempt(_ buffer: inout ByteBuffer, inputClosed: Bool) -> Bool {
        do {
            if case .frame(let frame) = try codec.decode(from: &buffer) {
                finish(.success((frame, codec)))
                return true
            }
            guard inputClosed else { return false }
            if buffer.readableBytes == 0 {
                finish(.success((nil, codec)))
            } else if case .frame(let frame) = try codec.decodeLast(from: &buffer) {
                finish(.success((frame, codec)))
            } else {
                finish(
                    .failure(
                        FramingError(code: .truncatedFrame, message: "stream ended inside a frame", bytes: buffer)
                    )
                )
            }
        } catch {
            finish(.failure(error))
        }
        return true
    }

    func fail(_ error: any Error) {
        finish(.failure(error))
    }

    private func finish(_ result: Result<(Codec.Frame?, Codec), any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }
}
