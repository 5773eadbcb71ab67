public import NIOCore

/// A NIO `ByteToMessageDecoder` that decodes frames with any ``FrameCodec``.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandlers(
///     ByteToMessageHandler(FrameDecoder(STXFrameCodec())),
///     MessageToByteHandler(FrameEncoder(STXFrameCodec()))
/// )
/// ```
///
/// Each decoded frame is fired as one `channelRead`, in order. One call to ``decode(context:buffer:)`` decodes every
/// whole frame the buffer holds, so NIO's `ByteToMessageHandler` makes one pass of its decode loop per read rather
/// than one per frame. A ``FramingError`` the codec throws is fired down the pipeline by NIO (`errorCaught`) after
/// the frames before it; bytes left over at end of stream throw ``FramingError/Code-swift.struct/truncatedFrame``.
/// Thread: the channel's event loop.
///
/// Removal: when a handler removes this decoder's `ByteToMessageHandler` while a frame is being delivered, the
/// whole frames already buffered are still delivered, in order, before the removal completes (NIO would decode
/// them with ``decodeLast(context:buffer:seenEOF:)`` one event-loop turn later; here they come in the same
/// turn), and a partial frame left over throws ``FramingError/Code-swift.struct/truncatedFrame`` as at the end of
/// the stream.
///
/// Speed: NIO's `ByteToMessageHandler` runs its decoder through generic code that is not specialized for it; its
/// cost per pass is paid once per read here, and the built-in codecs take specialized paths inside.
public struct FrameDecoder<Codec: FrameCodec>: ByteToMessageDecoder, Sendable {
    /// The decoder emits the codec's frames.
    public typealias InboundOut = Codec.Frame

    /// The codec that cuts the byte stream into frames.
    public var codec: Codec

    /// Creates a decoder around a codec.
    ///
    /// - Parameter codec: The codec; each handler gets its own copy.
    @inlinable
    public init(_ codec: Codec) {
        self.codec = codec
    }

    /// Decodes every whole frame in the buffer with the codec and fires each, in order.
    ///
    /// - Parameters:
    ///   - context: The handler's context.
    ///   - buffer: The accumulated bytes; on return it holds only the start of an incomplete frame, if any.
    /// - Returns: `.needMoreData`: the buffer holds no whole frame any more.
    /// - Throws: What the codec's ``FrameCodec/decode(from:)`` throws, after the frames before the bad bytes were
    ///   fired; the bad bytes stay in the buffer.
    @inlinable
    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        // `ByteToMessageHandler` calls this through its generic witness, so it runs unspecialized: per frame that
        // would cost a generic-metadata lookup, value-witness copies and `NIOAny`'s dynamic casts. The built-in
        // codecs take a concrete path instead (the branches fold away wherever this is specialized), and every
        // frame of the buffer is decoded in this one call: the handler's own loop (swapping this decoder out of
        // its storage and back, through value witnesses) then runs once per read, not once per frame.
        if Codec.self == STXFrameCodec.self {
            return try decodeFrames(&self.codec, as: STXFrameCodec.self, &buffer, context)
        }
        if Codec.self == LengthFieldFrameCodec.self {
            return try decodeFrames(&self.codec, as: LengthFieldFrameCodec.self, &buffer, context)
        }
        if Codec.self == DelimiterFrameCodec.self {
            return try decodeFrames(&self.codec, as: DelimiterFrameCodec.self, &buffer, context)
        }
        return try decodeFrames(&self.codec, &buffer, context)
    }

    /// Decodes one frame at the end of the stream with the codec's ``FrameCodec/decodeLast(from:)``.
    ///
    /// - Parameters:
    ///   - context: The handler's context.
    ///   - buffer: The bytes left over.
    ///   - seenEOF: Whether the channel saw end of file (the codec treats every call as the end of the stream).
    /// - Returns: `.continue` after a frame, `.needMoreData` when no bytes are left.
    /// - Throws: ``FramingError/Code-swift.struct/truncatedFrame`` for left-over bytes, or what the codec throws.
    @inlinable
    public mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        switch try self.codec.decodeLast(from: &buffer) {
        case .frame(let frame):
            context.fireChannelRead(Self.wrapInboundOut(frame))
            return .continue
        case .needMoreData:
            return .needMoreData
        }
    }
}

/// Decodes every whole frame in `buffer` with `codec` and fires each; called with a concrete codec type so it is
/// specialized.
@inlinable
func decodeFrames<Codec: FrameCodec>(
    _ codec: inout Codec,
    _ buffer: inout ByteBuffer,
    _ context: ChannelHandlerContext
) throws -> DecodingState {
    while case .frame(let frame) = try codec.decode(from: &buffer) {
        context.fireChannelRead(NIOAny(frame))
    }
    return .needMoreData
}

/// Decodes every whole frame with the codec at `codec`, whose type is `Concrete`, and fires each.
///
/// Taking the codec by pointer (`&codec` converts implicitly) lets unspecialized generic code reach the specialized
/// path for `Concrete` without a generic call or a closure.
///
/// - Precondition: `Value.self == Concrete.self` (checked by the caller), so the memory is bound to `Concrete`.
@inlinable
@inline(__always)
func decodeFrames<Value, Concrete: FrameCodec>(
    _ codec: UnsafeMutablePointer<Value>,
    as type: Concrete.Type,
    _ buffer: inout ByteBuffer,
    _ context: ChannelHandlerContext
) throws -> DecodingState {
    let concrete = UnsafeMutableRawPointer(codec).assumingMemoryBound(to: Concrete.self)
    return try decodeFrames(&concrete.pointee, &buffer, context)
}
