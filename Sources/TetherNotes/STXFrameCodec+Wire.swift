import NIOCore
import TetherCore

extension STXFrameCodec {
    /// The bytes of `frame` on the wire (header, payload, checksum) in one buffer of their size: what a connection's
    /// `write(_:timeout:)` takes as it is, without the growing buffer of its frame-encoding `write`.
    /// - Throws: `FramingError` `.frameTooLarge` when the payload is over ``maxPayloadLength``.
    func wireBytes(of frame: STXFrame) throws -> ByteBuffer {
        var bytes = ByteBufferAllocator().buffer(
            capacity: Self.headerLength + frame.payload.readableBytes + checksum.byteCount
        )
        try encode(frame, into: &bytes)
        return bytes
    }
}
