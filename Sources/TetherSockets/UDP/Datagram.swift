public import NIOCore

/// One UDP datagram and the address it came from (received) or goes to (sent).
public struct Datagram: Sendable, Hashable {
    /// The peer: the sender of a received datagram.
    public var remoteAddress: SocketAddress
    /// The datagram's bytes (possibly empty).
    public var data: ByteBuffer

    /// Creates a datagram.
    /// - Parameters:
    ///   - remoteAddress: the peer's address.
    ///   - data: the payload.
    public init(remoteAddress: SocketAddress, data: ByteBuffer) {
        self.remoteAddress = remoteAddress
        self.data = data
    }
}
