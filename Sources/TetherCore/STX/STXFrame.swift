public import NIOCore

/// One frame of the seed's framed protocol: `0x02 | destination | source | length | payload | checksum`.
///
/// The start byte, length and checksum belong to the wire format and are handled by ``STXFrameCodec``; a frame
/// carries only the addresses and the payload.
public struct STXFrame: Sendable, Hashable {
    /// The destination address.
    public var destination: UInt16
    /// The source address.
    public var source: UInt16
    /// The payload's readable bytes. A decoded frame's payload is a slice of the received bytes, not a copy.
    public var payload: ByteBuffer

    /// Creates a frame around a buffer.
    ///
    /// - Parameters:
    ///   - destination: The destination address.
    ///   - source: The source address.
    ///   - payload: The payload (its readable bytes).
    public init(destination: UInt16, source: UInt16, payload: ByteBuffer) {
        self.destination = destination
        self.source = source
        self.payload = payload
    }

    /// Creates a frame by copying bytes into a new payload buffer.
    ///
    /// - Parameters:
    ///   - destination: The destination address.
    ///   - source: The source address.
    ///   - bytes: The payload bytes, such as `[0x68, 0x69]` or `"hi".utf8`.
    public init<Bytes: Sequence>(destination: UInt16, source: UInt16, bytes: Bytes) where Bytes.Element == UInt8 {
        self.init(destination: destination, source: source, payload: ByteBuffer(bytes: bytes))
    }
}
