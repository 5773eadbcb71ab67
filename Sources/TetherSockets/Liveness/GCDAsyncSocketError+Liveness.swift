extension GCDAsyncSocketError {
    /// Tether addition: what the end of a connection was, so that a connect that never came up is told from a
    /// connection that was lost (CocoaAsyncSocket reported both through `socketDidDisconnect` alone).
    ///
    /// ```swift
    /// do { connection = try await TCPConnection.connect(host: host, port: port) }
    /// catch GCDAsyncSocketError.Disconnection.notConnected { scheduleRetry() }
    /// ```
    public struct Disconnection: Sendable, Hashable, CustomStringConvertible {
        private let rawValue: Int

        /// The connection never came up: name lookup, refusal, no route, connect timeout; on the async face,
        /// anything `TCPConnection.connect` throws (its TLS handshake included).
        public static let notConnected = Disconnection(rawValue: 0)
        /// An established connection ended: the peer closed or reset it, keepalive or the heartbeat found it dead,
        /// an I/O or TLS error, an operation's timeout on the delegate faces.
        public static let connectionLost = Disconnection(rawValue: 1)

        /// `notConnected` or `connectionLost`.
        public var description: String { rawValue == 0 ? "notConnected" : "connectionLost" }

        /// Matches an error whose ``GCDAsyncSocketError/disconnection`` is this one, so that
        /// `catch GCDAsyncSocketError.Disconnection.notConnected` works.
        public static func ~= (disconnection: Disconnection, error: any Error) -> Bool {
            (error as? GCDAsyncSocketError)?.disconnection == disconnection
        }
    }

    static var heartbeatTimeout: GCDAsyncSocketError {
        GCDAsyncSocketError(code: .heartbeatTimeout, message: "No reply to the heartbeat within its timeout")
    }
}

extension GCDAsyncSocketError {
    /// `error` marked as the end of a connection that never came up (other errors unchanged: cancellation).
    static func markingNotConnected(_ error: any Error) -> any Error {
        guard var own = error as? GCDAsyncSocketError else { return error }
        own.disconnection = .notConnected
        return own
    }
}
