import NIOConcurrencyHelpers
import NIOCore
import TetherCore

/// A frame read with a concrete codec, run on the event loop.
final class CodecFrameRead<Codec: FrameCodec>: FrameReadOperation {
    private var codec: Codec
    private var continuation: CheckedContinuation<(Codec.Frame?, Codec), any Error>?
    private let batch: DecodedFrames<Codec>?

    init(
        codec: Codec,
        batch: DecodedFrames<Codec>?,
        continuation: CheckedContinuation<(Codec.Frame?, Codec), any Error>
    ) {
        self.codec = codec
        self.batch = batch
        self.continuation = continuation
    }

    var decodedAhead: (any ReclaimableFrames)? { batch }

    func attempt(_ buffer: inout ByteBuffer, inputClosed: Bool) -> Bool {
        do {
            if case .frame(let frame) = try codec.decode(from: &buffer) {
                let reply = codec
                decodeAhead(&buffer)
                finish(.success((frame, reply)))
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

    /// Decodes the complete frames behind the first into the batch, consuming their bytes. Stops at the first
    /// incomplete frame or codec error: those bytes stay in `buffer` for the next step to report.
    ///
    /// The engine calls this class through ``FrameReadOperation``, so its methods run unspecialized: a loop over up
    /// to ``DecodedFrames/limit`` frames would then pay generic metadata lookups and value-witness calls per frame.
    /// The built-in codecs take a concrete path instead (as `FrameDecoder` does); other codecs the generic one.
    private func decodeAhead(_ buffer: inout ByteBuffer) {
        guard let batch, buffer.readableBytes > 0 else { return }
        if Codec.self == LengthFieldFrameCodec.self {
            decodeFramesAhead(&codec, as: LengthFieldFrameCodec.self, &buffer, into: batch)
        } else if Codec.self == STXFrameCodec.self {
            decodeFramesAhead(&codec, as: STXFrameCodec.self, &buffer, into: batch)
        } else if Codec.self == DelimiterFrameCodec.self {
            decodeFramesAhead(&codec, as: DelimiterFrameCodec.self, &buffer, into: batch)
        } else {
            decodeFramesAhead(&codec, &buffer, into: batch)
        }
    }

    private func finish(_ result: Result<(Codec.Frame?, Codec), any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }
}

/// Decodes the complete frames at the front of `buffer` into `batch` (up to its limit), consuming their bytes and
/// advancing `codec`. Stops at the first incomplete frame or codec error, whose bytes stay in `buffer`.
private func decodeFramesAhead<Codec: FrameCodec>(
    _ codec: inout Codec,
    _ buffer: inout ByteBuffer,
    into batch: DecodedFrames<Codec>
) {
    let start = buffer
    var frames = CircularBuffer<DecodedFrames<Codec>.Decoded>(initialCapacity: 64)
    while frames.count < DecodedFrames<Codec>.limit {
        let before = buffer.readerIndex
        var next = codec
        // A codec leaves the bytes in place when it throws; needMoreData may still have skipped garbage, which the
        // step that reports it must see again: either way the reader index goes back.
        guard case .frame(let frame)? = try? next.decode(from: &buffer) else {
            buffer.moveReaderIndex(to: before)
            break
        }
        frames.append(.init(frame: frame, codec: next, length: buffer.readerIndex - before))
        codec = next
    }
    guard !frames.isEmpty else { return }
    let consumed = buffer.readerIndex - start.readerIndex
    batch.fill(frames, bytes: start.getSlice(at: start.readerIndex, length: consumed)!)
}

/// ``decodeFramesAhead(_:_:into:)`` for a codec whose type, checked by the caller, is `Concrete`: specialized for
/// it, reached from unspecialized code without a generic call.
///
/// - Precondition: `Value.self == Concrete.self`.
@inline(__always)
private func decodeFramesAhead<Value: FrameCodec, Concrete: FrameCodec>(
    _ codec: UnsafeMutablePointer<Value>,
    as type: Concrete.Type,
    _ buffer: inout ByteBuffer,
    into batch: DecodedFrames<Value>
) {
    let concrete = UnsafeMutableRawPointer(codec).assumingMemoryBound(to: Concrete.self)
    decodeFramesAhead(&concrete.pointee, &buffer, into: unsafeDowncast(batch, to: DecodedFrames<Concrete>.self))
}
