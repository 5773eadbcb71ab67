import TetherCore

/// The frames waiting to be written to one connection, replies and pushed changes in one order. A client that does
/// not read its changes cannot grow the server's memory without bound: past ``limit`` frames waiting, the outbox
/// ends and the connection is closed.
struct NotesOutbox: Sendable {
    /// The most frames that may wait for one connection.
    static let limit = 10_000

    let stream: AsyncStream<STXFrame>
    private let continuation: AsyncStream<STXFrame>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(
            of: STXFrame.self,
            bufferingPolicy: .bufferingOldest(Self.limit)
        )
    }

    /// Queues `frame`; a full outbox ends (the writer then closes the connection).
    func send(_ frame: STXFrame) {
        if case .dropped = continuation.yield(frame) { continuation.finish() }
    }

    /// Ends the outbox after the frames already queued.
    func finish() {
        continuation.finish()
    }
}
