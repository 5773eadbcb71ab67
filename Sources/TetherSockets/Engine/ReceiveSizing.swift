import NIOCore

/// How large a TCP connection's reads from its socket grow.
///
/// NIO's default adaptive allocator stops at 64 KiB. A bulk stream read in 64 KiB pieces costs the delegate face a
/// delivery (a hop to the delegate queue) or an append to the engine's buffer per piece. Reads may grow to 256 KiB
/// here, and shrink again as NIO's allocator does (after two reads that fill at most half of it); idle and chatty
/// connections keep NIO's small first buffer.
enum ReceiveSizing {
    /// The largest single read from the socket.
    static let maximumRead = 262_144

    /// The allocator every TCP channel of the engine reads with.
    static var allocator: AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2_048, maximum: maximumRead)
    }
}
