import NIOCore

/// Frames decoded ahead of an iterator, whose bytes go back to the connection when another read comes first.
protocol ReclaimableFrames: AnyObject {
    /// Empties the batch; returns the bytes of the frames not taken, in order (nil when all were taken).
    func reclaim() -> ByteBuffer?
}
