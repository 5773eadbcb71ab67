public import NIOCore

/// A NIO `MessageToByteEncoder` that encodes frames with any ``FrameCodec``.
///
/// Use it as `MessageToByteHandler(FrameEncoder(STXFrameCodec()))`. A frame the codec refuses fails the write's
/// promise with a ``FramingError`` and writes nothing. Thread: the channel's event loop.
public struct FrameEncoder<Codec: FrameCodec>: MessageToByteEncoder, Sendable {
    /// The encoder accepts the codec's frames.
    public typealias OutboundIn = Codec.Frame

    /// The codec that turns frames into bytes.
    public var codec: Codec

    /// Creates an encoder around a codec.
    ///
    /// - Parameter codec: The codec.
    @inlinable
    public init(_ codec: Codec) {
        self.codec = codec
    }

    /// Encodes one frame into the outgoing buffer.
    ///
    /// - Parameters:
    ///   - data: The frame.
    ///   - out: The buffer NIO writes; unchanged if this throws.
    /// - Throws: What the codec's ``FrameCodec/encode(_:into:)`` throws.
    @inlinable
    public func encode(data: Codec.Frame, out: inout ByteBuffer) throws {
        try self.codec.encode(data, into: &out)
    }
}
