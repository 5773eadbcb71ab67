/// An application-level heartbeat (Tether addition): when the connection has written nothing for ``interval``, the
/// socket sends ``ping``; when no reply comes within ``timeout`` after it, the socket closes with
/// ``GCDAsyncSocketError/Code/heartbeatTimeout`` (``AsyncSocketError/Code/heartbeatTimeoutError`` on the RunLoop
/// face).
///
/// The application decides what counts as a reply (``Reply``): by default any byte received after the ping; with
/// ``Reply/confirmedByApplication`` only the application's own word, given once its reader recognised the answer
/// (`heartbeatReplyReceived()` on each face). The ping goes out in order with the application's writes (never in
/// the middle of one) and is reported to nobody: no tag, no `didWrite`.
///
/// ```swift
/// socket.heartbeat = try Heartbeat(ping: Array("PING\r\n".utf8), interval: .seconds(15), timeout: .seconds(5))
/// ```
public struct Heartbeat: Sendable, Hashable {
    /// What counts as the peer's reply to a ping.
    public enum Reply: Sendable, Hashable {
        /// Any byte received after the ping.
        case anyBytes
        /// Only a call to the face's `heartbeatReplyReceived()`, made when the application's reader saw the answer.
        case confirmedByApplication
    }

    /// The bytes sent as a ping.
    public let ping: [UInt8]
    /// Time without a completed write before a ping is sent.
    public let interval: Duration
    /// Time after a ping within which the reply must come.
    public let timeout: Duration
    /// What counts as the reply.
    public let reply: Reply

    /// A heartbeat.
    /// - Parameters:
    ///   - ping: the bytes to send; not empty.
    ///   - interval: positive.
    ///   - timeout: positive.
    ///   - reply: what counts as the reply; any byte by default.
    /// - Throws: ``GCDAsyncSocketError`` `.badParam` for an empty ping or a duration that is not positive.
    public init(ping: [UInt8], interval: Duration, timeout: Duration, reply: Reply = .anyBytes) throws {
        guard !ping.isEmpty else { throw GCDAsyncSocketError.badParam("Empty heartbeat ping") }
        guard interval > .zero else {
            throw GCDAsyncSocketError.badParam("Heartbeat interval \(interval) is not positive")
        }
        guard timeout > .zero else {
            throw GCDAsyncSocketError.badParam("Heartbeat timeout \(timeout) is not positive")
        }
        self.ping = ping
        self.interval = interval
        self.timeout = timeout
        self.reply = reply
    }
}
