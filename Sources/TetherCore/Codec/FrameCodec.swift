public import NIOCore

/// A value that cuts a byte stream into frames and turns frames back into bytes.
///
/// Every codec, built-in or user-written, keeps this contract:
///
/// - ``decode(from:)`` consumes **exactly one** frame's bytes and returns it, or consumes nothing and returns
///   ``FrameDecodingResult/needMoreData`` (apart from bytes that a resynchronisation policy discards).
/// - When it throws, the buffer's reader index is **unchanged**: the offending bytes stay in the buffer and a copy
///   rides on the ``FramingError``.
/// - It never reads past the frame it returns.
/// - Feeding the same byte stream in any chunking (one byte at a time, all at once, random splits) yields the
///   same frames.
///
/// Codecs are value types with no thread affinity. `decode` is `mutating` only for bookkeeping that makes a codec
/// faster or more informative on a stream (resynchronisation counters, how far a search has got); use one codec value
/// per byte stream.
///
/// ```swift
/// var codec = STXFrameCodec()
/// var buffer = ByteBuffer(bytes: [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA])
/// if case .frame(let frame) = try codec.decode(from: &buffer) {
///     print(frame.destination, frame.source, frame.payload.readableBytes)  // 1 2 2
/// }
/// ```
public protocol FrameCodec: Sendable {
    /// The decoded unit: what ``decode(from:)`` returns and ``encode(_:into:)`` writes.
    associatedtype Frame: Sendable

    /// Appends one frame's wire bytes to `buffer`.
    ///
    /// - Parameters:
    ///   - frame: The frame to encode.
    ///   - buffer: The buffer to append to. If encoding throws, it is left exactly as it was.
    /// - Throws: ``FramingError`` when the decoder would refuse the frame (too large, delimiter inside it, a length
    ///   the field cannot carry); nothing is appended then.
    func encode(_ frame: Frame, into buffer: inout ByteBuffer) throws

    /// Decodes one frame from the start of the readable bytes of `buffer`.
    ///
    /// - Parameter buffer: The bytes received so far. On `.frame` exactly that frame's bytes were consumed; on
    ///   `.needMoreData` the reader index is unchanged (apart from bytes discarded by a resynchronisation policy).
    /// - Returns: ``FrameDecodingResult/frame(_:)`` or ``FrameDecodingResult/needMoreData``.
    /// - Throws: ``FramingError`` for bytes that can never become a valid frame; the reader index is unchanged.
    mutating func decode(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<Frame>

    /// Decodes one frame when the stream has ended and no more bytes will arrive.
    ///
    /// - Parameter buffer: The bytes left over at the end of the stream.
    /// - Returns: A frame, or ``FrameDecodingResult/needMoreData`` once no bytes are left.
    /// - Throws: ``FramingError/Code-swift.struct/truncatedFrame`` when bytes remain that do not make a whole frame
    ///   (the bytes ride on the error and stay in the buffer), or any error ``decode(from:)`` throws.
    mutating func decodeLast(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<Frame>
}

extension FrameCodec {
    /// Decodes one frame at the end of the stream: ``decode(from:)``, and if that wants more data while bytes
    /// remain, throws ``FramingError/Code-swift.struct/truncatedFrame`` with a copy of all left-over bytes attached.
    ///
    /// - Parameter buffer: The bytes left over at the end of the stream; on throw neither the reader index nor the
    ///   codec's state changes, even for a codec that discards bytes while resynchronising.
    /// - Returns: A frame, or ``FrameDecodingResult/needMoreData`` when the buffer is empty.
    /// - Throws: ``FramingError``.
    @inlinable
    public mutating func decodeLast(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<Frame> {
        // Decode on copies so that a codec which discards bytes (resynchronisation) still leaves the buffer and its
        // own state untouched when the end of the stream turns out to cut a frame.
        var remaining = buffer
        var codec = self
        let result = try codec.decode(from: &remaining)
        if case .needMoreData = result, remaining.readableBytes > 0 {
            throw FramingError.truncated(buffer)
        }
        buffer = remaining
        self = codec
        return result
    }

    /// Encodes one frame into a new buffer.
    ///
    /// - Parameters:
    ///   - frame: The frame to encode.
    ///   - allocator: Allocates the returned buffer.
    /// - Returns: The frame's wire bytes.
    /// - Throws: ``FramingError`` as ``encode(_:into:)`` does.
    @inlinable
    public func encode(_ frame: Frame, allocator: ByteBufferAllocator = ByteBufferAllocator()) throws -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 0)
        try self.encode(frame, into: &buffer)
        return buffer
    }
}

/// The answer of ``FrameCodec/decode(from:)``: one frame, or a request for more bytes.
public enum FrameDecodingResult<Frame> {
    /// Exactly one frame's bytes were consumed.
    case frame(Frame)
    /// The readable bytes do not hold a whole frame yet; the reader index is unchanged (apart from bytes a
    /// resynchronisation policy discarded).
    case needMoreData
}

extension FrameDecodingResult: Sendable where Frame: Sendable {}
extension FrameDecodingResult: Equatable where Frame: Equatable {}

extension FramingError {
    /// The error for bytes left at the end of a stream that do not make a whole frame.
    @usableFromInline
    static func truncated(_ buffer: ByteBuffer) -> FramingError {
        FramingError(
            code: .truncatedFrame,
            message: "stream ended inside a frame: \(buffer.readableBytes) bytes left over",
            bytes: buffer.getSlice(at: buffer.readerIndex, length: buffer.readableBytes)
        )
    }
}
