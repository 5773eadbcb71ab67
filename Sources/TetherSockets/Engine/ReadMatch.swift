import NIOCore

/// The verdict of matching a read against the buffered bytes.
enum ReadMatch: Equatable {
    /// The read completes with the first `count` buffered bytes.
    case complete(count: Int)
    /// Not yet: `bytesDone` bytes count towards the read so far.
    case incomplete(bytesDone: Int)
    /// A separator read consumed its maximum length without a match.
    case maxedOut
}
