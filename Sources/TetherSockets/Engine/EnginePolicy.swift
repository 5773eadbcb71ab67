/// How operation-level failures are treated: the original closes the socket, the async face fails the call.
struct EnginePolicy: Equatable {
    /// A read that maxes out (or any operation failure) closes the connection instead of failing the call.
    var failuresCloseConnection: Bool
    /// The peer's end of stream closes the connection once buffered bytes are drained.
    var autoDisconnectOnClosedReadStream: Bool
    /// Partial progress is reported and published for the synchronous getters.
    var reportsProgress: Bool
    /// The face completes reads from the buffered bytes on its own threads: the machine is shared, behind a lock.
    var servesReadsOffLoop: Bool
    /// The peer's end of stream closes the connection as soon as no queued read can use the buffered bytes, which
    /// the close reports as unread (the RunLoop era's rule), instead of waiting for reads to drain them.
    var closesAtEndOfStreamWithUnreadBytes = false
    /// After `disconnectAfterWriting`, the bytes that arrive are kept (unread, for an error close to report) instead
    /// of read and dropped: the RunLoop era's `unreadData` returns them if a write then fails.
    var keepsInputAfterWritingClose = false

    /// CocoaAsyncSocket's rules.
    static let delegateFace = EnginePolicy(
        failuresCloseConnection: true,
        autoDisconnectOnClosedReadStream: true,
        reportsProgress: true,
        servesReadsOffLoop: true
    )
    /// `TCPConnection`'s rules.
    static let asyncFace = EnginePolicy(
        failuresCloseConnection: false,
        autoDisconnectOnClosedReadStream: false,
        reportsProgress: false,
        servesReadsOffLoop: false
    )
}
