import TetherConcurrency

/// What the far end of a simulated connection saw: the connection's writes, parsed, and how its side ended.
struct AsyncSimPeerRecord: Sendable {
    /// How the connection's side ended, as the peer saw it.
    enum End: Sendable, Equatable {
        /// The orderly end of the stream.
        case endOfStream
        /// A receive error (an errno, or the async face's error).
        case error(String)
    }

    var parser = WriteRecord.Parser()
    var end: End?
}

/// The far end of a simulated connection: it sends the schedule's stream until stopped, receives and checks what
/// the connection writes, can stop receiving for a while (so that writes fill the window), and ends its side as
/// the schedule's ending asks.
protocol AsyncSimPeer: AnyObject, Sendable {
    var record: LockedBox<AsyncSimPeerRecord> { get }
    /// Starts sending (chunks and pauses drawn from `seed`) and receiving.
    func start(seed: UInt64)
    /// Stops sending; returns how many bytes of the stream were sent in all.
    func stopSending() async throws -> Int
    /// After ``stopSending()``: sends the stream's next `tail` bytes, then half-closes (or with `reset`, resets
    /// the connection; a TLS peer closes it).
    func finish(from offset: Int, tail: Int, reset: Bool) async throws
    /// Stops or resumes receiving.
    func setReceiving(_ receiving: Bool)
    /// Returns once the connection's side ended (bounded).
    func receiverEnded() async throws
    /// Ends everything and closes the peer's side.
    func close() async throws
}
