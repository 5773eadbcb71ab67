import NIOCore

/// A frame read: decodes one frame from the engine's buffer with the caller's codec. Type-erased so that the engine
/// stays non-generic; the generic implementation lives with the async face.
protocol FrameReadOperation: AnyObject {
    /// Tries to decode one frame. Returns true when the operation finished (a frame, the end of the stream, or an
    /// error were handed to the waiting task); false when more bytes are needed. On a throw of the codec the bytes
    /// stay in `buffer`.
    func attempt(_ buffer: inout ByteBuffer, inputClosed: Bool) -> Bool

    /// Ends the operation with `error` (close, cancellation).
    func fail(_ error: any Error)

    /// Frames this operation decoded ahead for its iterator (their bytes left the buffer), if any.
    var decodedAhead: (any ReclaimableFrames)? { get }
}
