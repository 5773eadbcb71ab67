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
/// Each decoded frame is fired as one `channelRead`. A ``FramingError`` the codec throws is fired down the
/// pipeline by NIO (`errorCaught`); bytes left over at end of stream throw
/// ``FramingError/Code-swift.struct/truncatedFrame``. Thread: the channel's event loop.
///
/// Speed: NIO's `ByteToMessageHandler` runs its decoder through generic code that is not specialized for it, which
/// costs a generic decoder such as this one about 7 % over a hand-written non-generic decoder; the built-in codecs
/// take specialized paths inside. Where the async face serves you, `TCPConnection.frames(_:timeout:)` decodes
/// buffered frames in batches and runs well ahead of a `NIOAsyncChannel` over a hand-written decoder.
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

    /// Decodes one frame with the codec and fires it.
    ///
    /// - Parameters:
    ///   - context: The handler's context.
    ///   - buffer: The accumulated bytes.
    /// - Returns: `.continue` after a frame, `.needMoreData` otherwise.
    /// - Throws: What the codec's ``FrameCodec/decode(from:)`` throws.
    @inlinable
    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        // `ByteToMessageHandler` calls this through its generic witness, so it runs unspecialized: per frame that
        // would cost a generic-metadata lookup, value-witness copies and `NIOAny`'s dynamic casts. The built-in
        // codecs take a concrete path instead (the branches fold away wherever this is specialized).
        if Codec.self == STXFrameCodec.self {
            return try decodeFrame(&self.codec, as: STXFrameCodec.self, &buffer, context)
        }
        if Codec.self == LengthFieldFrameCodec.self {
            return try decodeFrame(&self.codec, as: LengthFieldFrameCodec.self, &buffer, context)
        }
        if Codec.self == DelimiterFrameCodec.self {
            return try decodeFrame(&self.codec, as: DelimiterFrameCodec.self, &buffer, context)
        }
        return try decodeFrame(&self.codec, &buffer, context)
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

/// Decodes one frame with `codec` and fires it; called with a concrete codec type so it is specialized.
@inlinable
func decodeFrame<Codec: FrameCodec>(
    _ codec: inout Codec,
    _ buffer: inout ByteBuffer,
    _ context: ChannelHandlerContext
) throws -> DecodingState {
    switch try codec.decode(from: &buffer) {
    case .frame(let frame):
        context.fireChannelRead(NIOAny(frame))
        return .continue
    case .needMoreData:
        return .needMoreData
    }
}

/// Decodes one frame with the codec at `codec`, whose type is `Concrete`, and fires it.
///
/// Taking the codec by pointer (`&codec` converts implicitly) lets unspecialized generic code reach the specialized
/// path for `Concrete` without a generic call or a closure.
///
/// - Precondition: `Value.self == Concrete.self` (checked by the caller), so the memory is bound to `Concrete`.
@inlinable
@inline(__always)
func decodeFrame<Value, Concrete: FrameCodec>(
    _ codec: UnsafeMutablePointer<Value>,
    as type: Concrete.Type,
    _ buffer: inout ByteBuffer,
    _ context: ChannelHandlerContext
) throws -> DecodingState {
    let concrete = UnsafeMutableRawPointer(codec).assumingMemoryBound(to: Concrete.self)
    return try decodeFrame(&concrete.pointee, &buffer, context)
}
