/// TCP keepalive and the user timeout of one connection (Tether addition): how the kernel finds out that a silent
/// peer is gone.
///
/// With keepalive on, after ``idle`` without traffic the kernel sends a probe every ``interval``; when ``count``
/// probes in a row go unanswered it ends the connection, which then closes with `ETIMEDOUT` (code `.other`, domain
/// `.posix`). ``userTimeout`` (`TCP_USER_TIMEOUT`) bounds how long sent data may stay unacknowledged (and, with
/// keepalive, how long probes may go unanswered) before the same close.
///
/// The default is ``off``: no keepalive and the system's user timeout, as CocoaAsyncSocket and the RunLoop-era
/// AsyncSocket left their sockets. A value is checked when it is made, so a socket never holds one the kernel would
/// refuse:
///
/// ```swift
/// socket.keepalive = try TCPKeepalive(idle: .seconds(30), interval: .seconds(5), count: 3)
/// ```
///
/// The kernel counts `idle` and `interval` in whole seconds (1…32767) and `count` in probes (1…127);
/// `userTimeout` in milliseconds (1 ms…24.8 days). Each `nil` keeps the system's value
/// (`net.ipv4.tcp_keepalive_time`, `…_intvl`, `…_probes`: 7200 s, 75 s and 9 by default on Linux).
/// Unix-domain connections have no TCP layer: the settings are ignored there.
public struct TCPKeepalive: Sendable, Hashable, CustomStringConvertible {
    /// Whether the kernel sends keepalive probes (`SO_KEEPALIVE`).
    public let isEnabled: Bool
    /// Time without traffic before the first probe (`TCP_KEEPIDLE`); nil: the system's.
    public let idle: Duration?
    /// Time between unanswered probes (`TCP_KEEPINTVL`); nil: the system's.
    public let interval: Duration?
    /// Unanswered probes that end the connection (`TCP_KEEPCNT`); nil: the system's.
    public let count: Int?
    /// How long sent data (or probes) may stay unacknowledged before the connection ends (`TCP_USER_TIMEOUT`);
    /// nil: the system's (no limit but the retransmission count).
    public let userTimeout: Duration?

    /// No keepalive, the system's user timeout: the originals' behaviour and the default of every face.
    public static let off = TCPKeepalive(
        uncheckedEnabled: false,
        idle: nil,
        interval: nil,
        count: nil,
        userTimeout: nil
    )

    /// The longest `idle` and `interval` the kernel takes, in seconds (`MAX_TCP_KEEPIDLE`, `MAX_TCP_KEEPINTVL`).
    static let maximumSeconds: Int64 = 32_767
    /// The most probes the kernel takes (`MAX_TCP_KEEPCNT`).
    static let maximumCount = 127
    /// The longest user timeout, in milliseconds (the kernel's `int`).
    static let maximumMilliseconds = Int64(Int32.max)

    /// Keepalive on.
    /// - Parameters:
    ///   - idle: time without traffic before the first probe, whole seconds in 1…32767; nil: the system's.
    ///   - interval: time between probes, whole seconds in 1…32767; nil: the system's.
    ///   - count: unanswered probes that end the connection, 1…127; nil: the system's.
    ///   - userTimeout: how long sent data may stay unacknowledged, whole milliseconds in 1 ms…`Int32.max` ms; nil:
    ///     the system's.
    /// - Throws: ``GCDAsyncSocketError`` `.badParam` naming the value that is out of range or not whole.
    public init(
        idle: Duration? = nil,
        interval: Duration? = nil,
        count: Int? = nil,
        userTimeout: Duration? = nil
    ) throws {
        try Self.checkSeconds(idle, name: "idle")
        try Self.checkSeconds(interval, name: "interval")
        if let count, !(1...Self.maximumCount).contains(count) {
            throw GCDAsyncSocketError.badParam("Keepalive count \(count) is outside 1...\(Self.maximumCount)")
        }
        try Self.checkMilliseconds(userTimeout)
        self.init(uncheckedEnabled: true, idle: idle, interval: interval, count: count, userTimeout: userTimeout)
    }

    /// Keepalive off, with a user timeout: sent data that stays unacknowledged for `userTimeout` ends the
    /// connection.
    /// - Parameter userTimeout: whole milliseconds in 1 ms…`Int32.max` ms.
    /// - Throws: ``GCDAsyncSocketError`` `.badParam` when it is out of range or not whole.
    public init(userTimeout: Duration) throws {
        try Self.checkMilliseconds(userTimeout)
        self.init(uncheckedEnabled: false, idle: nil, interval: nil, count: nil, userTimeout: userTimeout)
    }

    private init(uncheckedEnabled: Bool, idle: Duration?, interval: Duration?, count: Int?, userTimeout: Duration?) {
        self.isEnabled = uncheckedEnabled
        self.idle = idle
        self.interval = interval
        self.count = count
        self.userTimeout = userTimeout
    }

    /// `TCPKeepalive(off)` or `TCPKeepalive(idle 30 s, interval 5 s, count 3, user timeout system)`.
    public var description: String {
        guard isEnabled || userTimeout != nil else { return "TCPKeepalive(off)" }
        func text(_ value: Duration?) -> String { value.map { "\($0)" } ?? "system" }
        let keepalive =
            isEnabled
            ? "idle \(text(idle)), interval \(text(interval)), count \(count.map { "\($0)" } ?? "system")"
            : "keepalive off"
        return "TCPKeepalive(\(keepalive), user timeout \(text(userTimeout)))"
    }

    /// `idle`/`interval` as the kernel's whole seconds.
    static func wholeSeconds(_ value: Duration) -> Int64? {
        let (seconds, attoseconds) = value.components
        return attoseconds == 0 ? seconds : nil
    }

    /// `userTimeout` as the kernel's whole milliseconds.
    static func wholeMilliseconds(_ value: Duration) -> Int64? {
        let (seconds, attoseconds) = value.components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        guard attoseconds % perMillisecond == 0, seconds <= maximumMilliseconds / 1_000 + 1 else { return nil }
        return seconds * 1_000 + attoseconds / perMillisecond
    }

    private static func checkSeconds(_ value: Duration?, name: String) throws {
        guard let value else { return }
        guard let seconds = wholeSeconds(value) else {
            throw GCDAsyncSocketError.badParam("Keepalive \(name) \(value) is not a whole number of seconds")
        }
        guard (1...maximumSeconds).contains(seconds) else {
            throw GCDAsyncSocketError.badParam("Keepalive \(name) \(value) is outside 1...\(maximumSeconds) seconds")
        }
    }

    private static func checkMilliseconds(_ value: Duration?) throws {
        guard let value else { return }
        guard value > .zero, let milliseconds = wholeMilliseconds(value) else {
            throw GCDAsyncSocketError.badParam(
                "User timeout \(value) is not a positive whole number of milliseconds"
            )
        }
        guard milliseconds <= maximumMilliseconds else {
            throw GCDAsyncSocketError.badParam("User timeout \(value) is longer than \(maximumMilliseconds) ms")
        }
    }
}
