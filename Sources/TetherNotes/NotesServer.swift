public import Logging
import NIOCore
import TetherConcurrency
import TetherCore
public import TetherSockets
public import TetherStore

/// The notes service: the seed's STX frames carrying the notes protocol (see <doc:NotesProtocol>) over TCP or TLS.
///
/// With ``NotesAccounts`` every connection authenticates first and is then bound to one user's notes: it lists,
/// changes and watches those and no others. Without accounts (``init(dao:changes:limits:maxPayloadLength:logger:)``)
/// the server is anonymous and serves loopback only.
///
/// ```swift
/// let accounts = try NotesAccounts.sqlite(directory: folder)
/// let listener = try await TCPListener.bind(host: "0.0.0.0", port: 7_070, tls: tls)
/// try await NotesServer(accounts: accounts).serve(listener)  // until the listener closes
/// ```
///
/// Each connection's requests are carried out in order; its replies and the changes pushed to it are written in
/// one order. Every change made through any connection is pushed to every subscribed connection of the same user,
/// in the order the store committed them: on its own store (``NotesChangeSource/local``), while a connection of
/// that user is subscribed, the server makes that user's changes one at a time and publishes each before the next;
/// while none is, their changes run side by side, as any callers of the store would.
public final class NotesServer: Sendable {
    enum Mode: Sendable {
        case anonymous(NotesServedSpace)
        case accounts(NotesAccounts, NotesSpaceRegistry)
    }

    let mode: Mode
    let limits: NotesServerLimits
    let codec: STXFrameCodec
    /// The largest payload this server reads and writes.
    let maxPayloadLength: Int
    /// The longest a subscribe request waits for a change feed that reconnects.
    let feedWait: Duration = .seconds(10)
    let logger: Logger
    let counts = LockedBox(NotesConnectionCounts())
    /// Who waits for the count of open connections (tests).
    let connectionWaiters = NotesConnectionWaiters()
    let throttle = LockedBox(NotesLoginThrottle())
    /// The time the login throttle goes by (a test's own clock in tests).
    let now: @Sendable () -> Duration
    let nextConnection = LockedBox<UInt64>(0)
    /// The most bytes that ever waited for one ended connection (for tests).
    let peakOutboxBytes = LockedBox(0)

    /// Returns once the number of connections the server holds meets `condition` (for tests: a connection's place is
    /// free only once the server has seen it end).
    func connections(where condition: @escaping @Sendable (Int) -> Bool) async throws {
        let counts = counts
        try await connectionWaiters.wait(until: condition) { counts.withLock { $0.total } }
    }

    /// With an anonymous feed: one element each time the server's feed is subscribed to and listening (for tests).
    var feedSubscriptions: AsyncStream<Void>? {
        if case .anonymous(let space) = mode { space.relay?.subscriptions } else { nil }
    }

    /// A server whose every connection authenticates as one of `accounts`' users and serves that user's notes.
    /// - Parameters:
    ///   - accounts: the users, their credentials and their notes.
    ///   - limits: connections per address and per user, the authentication deadline, the idle timeout.
    ///   - maxPayloadLength: the largest frame payload accepted and written, from ``minPayloadLength`` to the
    ///     protocol's 65 535 (a value outside is brought to the nearer end); a header announcing more ends the
    ///     connection with an `.outOfStep` error, and an add or an edit whose note would not fit in a reply (a text
    ///     over `NotesWireFormat.maxTextLength(forPayloadLength:)` bytes) is refused with `.tooLarge`. Default: the
    ///     protocol's 65 535.
    ///   - logger: logs each connection's end, each refused login and each failed request at `.debug`.
    public convenience init(
        accounts: NotesAccounts,
        limits: NotesServerLimits = NotesServerLimits(),
        maxPayloadLength: Int = NotesWireFormat.maxPayloadLength,
        logger: Logger = Logger(label: "tether.notes.server")
    ) {
        self.init(
            mode: .accounts(accounts, NotesSpaceRegistry(accounts: accounts, logger: logger)),
            limits: limits,
            maxPayloadLength: maxPayloadLength,
            logger: logger,
            now: Self.uptime
        )
    }

    /// A server with accounts whose login throttle goes by `now` (a test's clock).
    convenience init(
        accounts: NotesAccounts,
        limits: NotesServerLimits,
        maxPayloadLength: Int,
        now: @escaping @Sendable () -> Duration
    ) {
        let logger = Logger(label: "tether.notes.server")
        self.init(
            mode: .accounts(accounts, NotesSpaceRegistry(accounts: accounts, logger: logger)),
            limits: limits,
            maxPayloadLength: maxPayloadLength,
            logger: logger,
            now: now
        )
    }

    /// An anonymous server on `store`, for loopback only (see ``init(dao:changes:limits:maxPayloadLength:logger:)``).
    public convenience init(
        store: any RecordStore<Note>,
        limits: NotesServerLimits = NotesServerLimits(),
        maxPayloadLength: Int = NotesWireFormat.maxPayloadLength,
        logger: Logger = Logger(label: "tether.notes.server")
    ) {
        self.init(dao: NoteDAO(store: store), limits: limits, maxPayloadLength: maxPayloadLength, logger: logger)
    }

    /// An anonymous server on the notes of `dao`, for loopback only: every connection is served at once, without
    /// credentials; ``serve(_:ready:)`` refuses a listener on another address and ``serve(_:)`` closes a connection
    /// that did not arrive on loopback.
    /// - Parameters:
    ///   - dao: the notes.
    ///   - changes: where the changes pushed to subscribers come from: the ones made through this server (the
    ///     default), or a feed of the store's changes when other servers write to it too.
    ///   - limits: connections per address, the idle timeout.
    ///   - maxPayloadLength: the largest frame payload accepted and written, from ``minPayloadLength`` to the
    ///     protocol's 65 535 (a value outside is brought to the nearer end); a header announcing more ends the
    ///     connection with an `.outOfStep` error, and an add or an edit whose note would not fit in a reply (a text
    ///     over `NotesWireFormat.maxTextLength(forPayloadLength:)` bytes) is refused with `.tooLarge`. Default: the
    ///     protocol's 65 535.
    ///   - logger: logs each connection's end and each failed request at `.debug`.
    public convenience init(
        dao: NoteDAO,
        changes: NotesChangeSource = .local,
        limits: NotesServerLimits = NotesServerLimits(),
        maxPayloadLength: Int = NotesWireFormat.maxPayloadLength,
        logger: Logger = Logger(label: "tether.notes.server")
    ) {
        self.init(
            mode: .anonymous(NotesServedSpace(dao: dao, changes: changes, logger: logger)),
            limits: limits,
            maxPayloadLength: maxPayloadLength,
            logger: logger,
            now: Self.uptime
        )
    }

    init(
        mode: Mode,
        limits: NotesServerLimits,
        maxPayloadLength: Int,
        logger: Logger,
        now: @escaping @Sendable () -> Duration
    ) {
        self.mode = mode
        self.limits = limits
        let limit = min(max(maxPayloadLength, Self.minPayloadLength), NotesWireFormat.maxPayloadLength)
        self.maxPayloadLength = limit
        self.codec = STXFrameCodec(maxPayloadLength: limit)
        self.logger = logger
        self.now = now
    }

    /// The lowest payload limit a server takes: room for a note of 30 bytes of text in every reply.
    public static let minPayloadLength = 64

    private static let start = ContinuousClock.now
    private static let uptime: @Sendable () -> Duration = { ContinuousClock.now - start }

    /// The number of connections subscribed to changes (of every user).
    public var subscriberCount: Int {
        switch mode {
        case .anonymous(let space): space.hub.count
        case .accounts(_, let registry): registry.opened.withLock { $0.reduce(0) { $0 + $1.hub.count } }
        }
    }

    /// Serves every connection of `listener` until it closes (or the task is cancelled).
    ///
    /// An anonymous server with a ``NotesChangeSource/feed(_:)`` subscribes to it first (a server serving several
    /// listeners at once shares one subscription). A server with accounts subscribes to a user's feed when the
    /// first connection of that user authenticates.
    /// - Parameters:
    ///   - listener: the connections to serve.
    ///   - ready: called once, when the server is subscribed to its feed and accepts connections (a command prints
    ///     its `listening on` line here).
    /// - Throws: ``NotesError`` `.invalidArgument` when an anonymous server is given a listener that is not on
    ///   loopback; the listener's error, or the feed's when its first subscription fails.
    public func serve(_ listener: TCPListener, ready: @Sendable () -> Void = {}) async throws {
        var relay: NotesChangeRelay?
        if case .anonymous(let space) = mode {
            guard Self.isLoopback(listener.localAddress) else {
                throw NotesError(
                    code: .invalidArgument,
                    message: "an anonymous notes server serves loopback only, not \(listener.localAddress)"
                )
            }
            relay = space.relay
        }
        try await relay?.join()
        defer { relay?.leave() }
        ready()
        if #available(macOS 14, iOS 17, tvOS 17, *) {
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in listener.connections {
                    group.addTask { await self.serve(connection) }
                }
            }
        } else {
            // A plain task group keeps every finished child until it is awaited: a task per client instead.
            for try await connection in listener.connections {
                Task { await self.serve(connection) }
            }
        }
    }

    /// Whether `address` is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x.y.z).
    static func isLoopback(_ address: SocketAddress) -> Bool {
        guard let ip = address.ipAddress else { return false }
        return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
    }
}
