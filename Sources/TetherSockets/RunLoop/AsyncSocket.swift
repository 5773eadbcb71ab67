public import Foundation
public import NIOCore
import NIOPosix
import TetherConcurrency

/// A TCP socket with the RunLoop-era CocoaAsyncSocket interface (`AsyncSocket`, the class the first seed uses):
/// queued reads and writes with tags, timeouts a delegate can extend, progress, TLS, and delegate callbacks on a run
/// loop.
///
/// A socket belongs to the run loop current when `connect` or `accept` is called (or the one given to
/// ``moveToRunLoop(_:)``): its ``AsyncSocketDelegate`` callbacks are performed there, in its modes (default:
/// `.default`), in order, and only while that run loop runs. On Linux that is Foundation's `RunLoop`; run it, e.g.
/// on a thread of your own with `RunLoop.current.run()`.
///
/// ```swift
/// final class EchoClient: AsyncSocketDelegate {
///     let socket = AsyncSocket()
///     func start() throws {
///         socket.delegate = self
///         try socket.connect(toHost: "127.0.0.1", onPort: 7, withTimeout: 5)
///         socket.write(Data("hello\r\n".utf8), withTimeout: 5, tag: 1)
///         socket.readData(to: AsyncSocket.crlfData(), withTimeout: 5, tag: 2)
///     }
///     func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) { print(data) }
/// }
/// ```
///
/// It runs on the same engine as ``GCDAsyncSocket`` and ``TCPConnection`` (a third face, not a second engine).
/// Differences from the original (Δ): the delegate is held weakly; calls may come from any thread (call from the
/// socket's run loop thread for a defined order relative to callbacks); misuse that raised an exception throws
/// ``AsyncSocketException``; a socket released while connected closes silently (no callback from `deinit`).
// Sendable: every stored member is immutable or behind `state`'s lock; the delegate (not Sendable) is called on the
// socket's run loop thread only (and inside `connect`/`disconnect` on the caller's thread, as the original).
public final class AsyncSocket: @unchecked Sendable {
    enum Phase: Equatable {
        case idle
        case listening
        case connecting
        case connected
    }

    struct State {
        weak var delegate: (any AsyncSocketDelegate)?
        var userData: Int
        var phase = Phase.idle
        /// Counts lives: a callback posted for an earlier life is dropped when it comes to run.
        var generation: UInt64 = 0
        /// The engine's face serving the current life, and the delegate it reports to.
        var core: GCDAsyncSocket?
        var bridge: RunLoopSocketBridge?
        /// Reads and writes queued and not yet reported (a pending `startTLS` counts as one of each).
        var pendingReads = 0
        var pendingWrites = 0
        var tlsRequested = false
        /// `disconnectAfter…` was called: later reads and writes are ignored.
        var forbidsIO = false
        /// The bytes received and not read, during `onSocket(_:willDisconnectWithError:)` only.
        var unreadData: Data?
        /// Keepalive, idle detector and heartbeat (Tether additions, `AsyncSocket+Liveness`).
        var liveness = LivenessSettings()
        /// Connect through this proxy (``AsyncSocket/proxy``).
        var proxy: ProxyConfiguration?
    }

    let state: LockedBox<State>
    let mailbox: RunLoopMailbox
    let eventLoopGroup: any EventLoopGroup

    // MARK: init

    /// A socket without a delegate (set one before connecting or accepting).
    public convenience init() {
        self.init(delegate: nil, userData: 0)
    }

    /// A socket reporting to `delegate` (held weakly).
    public convenience init(delegate: (any AsyncSocketDelegate)?) {
        self.init(delegate: delegate, userData: 0)
    }

    /// A socket reporting to `delegate` (held weakly), with a value of yours.
    public convenience init(delegate: (any AsyncSocketDelegate)?, userData: Int) {
        self.init(delegate: delegate, userData: userData, eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    }

    /// Δ: a socket whose engine runs on `eventLoopGroup` (the original had no engine to choose).
    public init(delegate: (any AsyncSocketDelegate)?, userData: Int, eventLoopGroup: any EventLoopGroup) {
        self.state = LockedBox(State(delegate: delegate, userData: userData))
        self.mailbox = RunLoopMailbox(runLoop: nil)
        self.eventLoopGroup = eventLoopGroup
    }

    /// An accepted socket: already connected through `core`, delivering once its run loop is chosen.
    init(
        accepted core: GCDAsyncSocket,
        delegate: (any AsyncSocketDelegate)?,
        modes: [RunLoop.Mode],
        group: any EventLoopGroup
    ) {
        var initial = State(delegate: delegate, userData: 0)
        initial.phase = .connected
        initial.generation = 1
        initial.core = core
        initial.liveness = core.state.withLock { $0.configuration.liveness }
        self.state = LockedBox(initial)
        self.mailbox = RunLoopMailbox(runLoop: nil, modes: modes)
        self.eventLoopGroup = group
        let bridge = RunLoopSocketBridge(owner: self, generation: 1)
        state.withLock { $0.bridge = bridge }
        core.synchronouslySetDelegate(bridge)
        core.state.withLock { $0.configuration.servesBufferedReadsOnCaller = true }
    }

    deinit {
        // Δ: no callback from deinit (Swift must not hand out `self` here); the connection closes silently.
        let core = state.withLock { $0.core }
        core?.delegate = nil
        core?.disconnect()
    }

    // MARK: delegate

    /// The delegate, held weakly (Δ: the original held it strongly under ARC).
    public var delegate: (any AsyncSocketDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Whether changing the delegate now is safe: false while reads, writes or a `startTLS` are queued or current.
    public func canSafelySetDelegate() -> Bool {
        state.withLock { $0.pendingReads == 0 && $0.pendingWrites == 0 }
    }

    /// A value of yours; not inherited by accepted sockets.
    public var userData: Int {
        get { state.withLock { $0.userData } }
        set { state.withLock { $0.userData = newValue } }
    }

    // MARK: state

    /// True from `onSocket(_:didConnectToHost:port:)` until the socket closes; false while connecting or listening.
    public func isConnected() -> Bool {
        state.withLock { $0.phase == .connected && $0.core?.isConnected == true }
    }

    /// The peer's numeric IP; nil when not connected.
    public func connectedHost() -> String? { currentCore?.connectedHost }
    /// The peer's port; 0 when not connected.
    public func connectedPort() -> UInt16 { currentCore?.connectedPort ?? 0 }
    /// The local numeric IP (a listener's bound address); nil when not started.
    public func localHost() -> String? { currentCore?.localHost }
    /// The local port (a listener's port, the real one after `accept(onPort: 0)`); 0 when not started.
    public func localPort() -> UInt16 { currentCore?.localPort ?? 0 }
    /// The peer's `sockaddr` bytes (Linux layout); nil when not connected.
    public func connectedAddress() -> Data? { currentCore?.connectedAddress }
    /// The local `sockaddr` bytes (Linux layout); nil when not started.
    public func localAddress() -> Data? { currentCore?.localAddress }
    /// Whether an IPv4 socket is in use (a listener may use both families).
    public func isIPv4() -> Bool { currentCore?.isIPv4 ?? false }
    /// Whether an IPv6 socket is in use.
    public func isIPv6() -> Bool { currentCore?.isIPv6 ?? false }

    var currentCore: GCDAsyncSocket? { state.withLock { $0.core } }

    /// The bytes received and not read: only inside `onSocket(_:willDisconnectWithError:)`, nil elsewhere.
    public func unreadData() -> Data? {
        state.withLock { $0.unreadData }
    }

    /// A one-line summary: addresses and queued work.
    public var description: String {
        let (phase, reads, writes) = state.withLock { ($0.phase, $0.pendingReads, $0.pendingWrites) }
        let local = localHost().map { "\($0) \(localPort())" } ?? "nowhere"
        let remote = connectedHost().map { "\($0) \(connectedPort())" } ?? "nowhere"
        return "<AsyncSocket local \(local) remote \(remote) has queued \(reads) reads \(writes) writes, \(phase)>"
    }

    // MARK: Apple-only handles

    /// Always nil on Linux (there is no CFSocket); the original's handle was not for reading or writing anyway.
    public func getCFSocket() -> OpaquePointer? { nil }
    /// Always nil on Linux (there are no CFStreams).
    public func getCFReadStream() -> OpaquePointer? { nil }
    /// Always nil on Linux (there are no CFStreams).
    public func getCFWriteStream() -> OpaquePointer? { nil }

    // MARK: utilities

    /// `0D 0A`.
    public class func crlfData() -> Data { Data([0x0D, 0x0A]) }
    /// `0D`.
    public class func crData() -> Data { Data([0x0D]) }
    /// `0A`.
    public class func lfData() -> Data { Data([0x0A]) }
    /// A single `00` byte.
    public class func zeroData() -> Data { Data([0x00]) }
}
