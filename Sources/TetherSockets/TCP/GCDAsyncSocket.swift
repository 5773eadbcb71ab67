public import Dispatch
public import Foundation
public import Logging
import NIOConcurrencyHelpers
public import NIOCore
public import NIOPosix
import TetherConcurrency

/// A TCP socket with CocoaAsyncSocket's `GCDAsyncSocket` interface: queued reads and writes with tags, timeouts a
/// delegate can extend, progress, and callbacks on a delegate queue.
///
/// Every call returns at once; results arrive as ``GCDAsyncSocketDelegate`` callbacks, in order. Reads and writes
/// queue in FIFO order (independently of each other) and run on one SwiftNIO event loop, the same engine that
/// serves the async face (``TCPConnection``).
///
/// ```swift
/// final class Client: GCDAsyncSocketDelegate {
///     let socket = GCDAsyncSocket()
///     func start() throws {
///         socket.setDelegate(self, delegateQueue: .main)
///         try socket.connect(toHost: "127.0.0.1", onPort: 7, withTimeout: 5)
///         socket.write(Data("hello\r\n".utf8), withTimeout: 5, tag: 1)
///         socket.readData(to: GCDAsyncSocket.crlfData(), withTimeout: 5, tag: 2)
///     }
///     func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) { print(data) }
/// }
/// ```
///
/// As the original, the socket lives as long as you keep a reference to it: the last reference going away closes
/// its connection (or its listeners) without a delegate call, and an accepted socket that the delegate does not keep
/// closes the same way. Differences from the original (Δ): a closing error carries the undelivered bytes and the
/// dropped tags; `callbackDelivery` can skip the thread hop. The socket is `Sendable`: every member may be called
/// from any thread.
// Sendable: every stored member is immutable or behind `state`'s lock; the delegate (not Sendable) is only called
// on its delegate queue (or on the event loop in `.eventLoop` delivery), never through the lock.
public final class GCDAsyncSocket: @unchecked Sendable {
    /// Where delegate callbacks run.
    public enum CallbackDelivery: Sendable, Hashable {
        /// The original: every callback is dispatched asynchronously onto `delegateQueue`.
        case delegateQueue
        /// No hop: callbacks run on the socket's event loop, in order. They must not block.
        case eventLoop
    }

    /// A snapshot of the current read or write.
    public struct IOProgress: Sendable, Hashable {
        /// The operation's tag.
        public var tag: Int
        /// Bytes read or written so far by the operation.
        public var bytesDone: Int
        /// The operation's length: a write's size, a length read's length, 0 for other reads.
        public var total: Int
        /// `bytesDone / total`, or 1.0 when `total` is 0.
        public var fractionCompleted: Double

        init(tag: Int, bytesDone: Int, total: Int) {
            self.tag = tag
            self.bytesDone = bytesDone
            self.total = total
            self.fractionCompleted = total == 0 ? 1.0 : Double(bytesDone) / Double(total)
        }
    }

    struct Configuration {
        var isIPv4Enabled = true
        var isIPv6Enabled = true
        var isIPv4PreferredOverIPv6 = true
        var alternateAddressDelay: TimeInterval = 0.3
        var autoDisconnectOnClosedReadStream = true
        var callbackDelivery = CallbackDelivery.delegateQueue
        /// A read issued off the loop that buffered bytes satisfy calls the delegate on the caller's thread, in
        /// `.eventLoop` delivery too: the RunLoop-era face's bridge, which only posts to a run loop, sets it.
        var servesBufferedReadsOnCaller = false
        /// The peer's end of stream closes at once, the bytes not read going with the close: the RunLoop-era face
        /// sets it (accepted sockets inherit it from their listener).
        var closesAtEndOfStreamWithUnreadBytes = false
        /// Keepalive, idle detector and heartbeat (Tether additions, `GCDAsyncSocket+Liveness`).
        var liveness = LivenessSettings()
        /// Connect through this proxy (``GCDAsyncSocket/proxy``).
        var proxy: ProxyConfiguration?
    }

    struct State {
        weak var delegate: (any GCDAsyncSocketDelegate)?
        var delegateQueue: DispatchQueue?
        var configuration = Configuration()
        var userData: (any Sendable)?
        var lifecycle = SocketLifecycle()
        /// The delivery mode of the current life (fixed when it starts).
        var delivery = CallbackDelivery.delegateQueue
        var adapter: EngineAdapter?
        var channel: (any Channel)?
        var remoteAddress: SocketAddress?
        var localAddress: SocketAddress?
        var connectedURL: URL?
        var listeners: [any Channel] = []
        /// The one loop every listening channel of the current life runs on: in `.eventLoop` delivery the listener's
        /// callbacks (accepts included) run there, one at a time, whichever loop an accepted socket runs on.
        var listenerLoop: (any EventLoop)?
        var listenerAddresses: [SocketAddress] = []
        var listenerPath: String?
        var isSecure = false
        var negotiatedProtocol: String?
        /// A `startTLS` was taken for the current life (a second one is ignored).
        var tlsRequested = false
        /// The host given to `connect(toHost:)`, for TLS name verification.
        var connectHost: String?
        /// The host and port given to connect when the connection goes through a proxy: what `didConnectToHost`,
        /// `connectedHost` and `connectedPort` report (the socket's own peer is the proxy).
        var proxiedTarget: ProxyTarget?
        var progress: LockedBox<ProgressSnapshot>?
        /// The current life's machine, for reads served from the buffer on the delegate queue.
        var machine: LockedBox<SocketEngine.Machine>?
    }

    let state: LockedBox<State>
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger?

    // MARK: init

    /// Creates a socket.
    /// - Parameters:
    ///   - delegate: receives the callbacks; held weakly. Must be set before connecting or accepting.
    ///   - delegateQueue: where callbacks run (in `.delegateQueue` delivery).
    ///   - eventLoopGroup: the engine's event loops; the shared singleton by default.
    ///   - logger: where to log at debug/trace level; nothing is logged without one.
    public init(
        delegate: (any GCDAsyncSocketDelegate)? = nil,
        delegateQueue: DispatchQueue? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) {
        var initial = State()
        initial.delegate = delegate
        initial.delegateQueue = delegateQueue
        self.state = LockedBox(initial)
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// As the original's `dealloc`: the user's last reference going away closes the connection or the listeners,
    /// dropping queued reads and writes. No delegate call follows (the original passed a nil socket; Swift has none
    /// to pass).
    deinit {
        let (adapter, listeners) = state.withLock { s -> (EngineAdapter?, [any Channel]) in
            (s.adapter, s.listeners)
        }
        adapter?.socketReleased()
        for listener in listeners { listener.close(promise: nil) }
    }

    // MARK: configuration

    /// The delegate, held weakly.
    public var delegate: (any GCDAsyncSocketDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// The queue callbacks are dispatched on.
    public var delegateQueue: DispatchQueue? {
        get { state.withLock { $0.delegateQueue } }
        set { state.withLock { $0.delegateQueue = newValue } }
    }

    /// Sets the delegate and its queue together.
    public func setDelegate(_ delegate: (any GCDAsyncSocketDelegate)?, delegateQueue: DispatchQueue?) {
        state.withLock {
            $0.delegate = delegate
            $0.delegateQueue = delegateQueue
        }
    }

    /// Sets the delegate; takes effect before it returns (as every setter here).
    public func synchronouslySetDelegate(_ delegate: (any GCDAsyncSocketDelegate)?) {
        self.delegate = delegate
    }

    /// Sets the delegate queue; takes effect before it returns.
    public func synchronouslySetDelegateQueue(_ delegateQueue: DispatchQueue?) {
        self.delegateQueue = delegateQueue
    }

    /// Sets the delegate and its queue; takes effect before it returns.
    public func synchronouslySetDelegate(_ delegate: (any GCDAsyncSocketDelegate)?, delegateQueue: DispatchQueue?) {
        setDelegate(delegate, delegateQueue: delegateQueue)
    }

    /// Whether IPv4 may be used. Default true.
    public var isIPv4Enabled: Bool {
        get { state.withLock { $0.configuration.isIPv4Enabled } }
        set { state.withLock { $0.configuration.isIPv4Enabled = newValue } }
    }

    /// Whether IPv6 may be used. Default true.
    public var isIPv6Enabled: Bool {
        get { state.withLock { $0.configuration.isIPv6Enabled } }
        set { state.withLock { $0.configuration.isIPv6Enabled = newValue } }
    }

    /// Which family is tried first when a name has both. Default true.
    public var isIPv4PreferredOverIPv6: Bool {
        get { state.withLock { $0.configuration.isIPv4PreferredOverIPv6 } }
        set { state.withLock { $0.configuration.isIPv4PreferredOverIPv6 = newValue } }
    }

    /// Seconds to wait before trying the other family when connecting by name. Default 0.3.
    public var alternateAddressDelay: TimeInterval {
        get { state.withLock { $0.configuration.alternateAddressDelay } }
        set { state.withLock { $0.configuration.alternateAddressDelay = newValue } }
    }

    /// Whether a peer's close ends the socket (true, default) or only its read side (false: writes go on and
    /// ``GCDAsyncSocketDelegate/socketDidCloseReadStream(_:)`` is called once).
    public var autoDisconnectOnClosedReadStream: Bool {
        get { state.withLock { $0.configuration.autoDisconnectOnClosedReadStream } }
        set { state.withLock { $0.configuration.autoDisconnectOnClosedReadStream = newValue } }
    }

    /// Any value of yours; never used by the socket.
    public var userData: (any Sendable)? {
        get { state.withLock { $0.userData } }
        set { state.withLock { $0.userData = newValue } }
    }

    /// Where callbacks run; set before connecting or accepting. Accepted sockets inherit it.
    public var callbackDelivery: CallbackDelivery {
        get { state.withLock { $0.configuration.callbackDelivery } }
        set { state.withLock { $0.configuration.callbackDelivery = newValue } }
    }

    // MARK: diagnostics

    /// True when the socket is not started (never connected or accepting, or closed).
    public var isDisconnected: Bool { state.withLock { $0.lifecycle.isDisconnected } }

    /// True while the TCP connection is established; false for a listening socket.
    public var isConnected: Bool { state.withLock { $0.lifecycle.isConnected } }

    /// The peer's numeric IP, without brackets and never `::ffff:`-mapped; nil when not connected. Through a
    /// ``proxy``, the host given to connect (a name stays a name).
    public var connectedHost: String? {
        state.withLock { $0.lifecycle.isConnected ? $0.proxiedTarget?.host ?? $0.remoteAddress?.numericHost : nil }
    }

    /// The peer's port; 0 when not connected.
    public var connectedPort: UInt16 {
        state.withLock { $0.lifecycle.isConnected ? UInt16($0.proxiedTarget?.port ?? $0.remoteAddress?.port ?? 0) : 0 }
    }

    /// The peer's path for a unix-domain connection.
    public var connectedUrl: URL? {
        state.withLock { $0.lifecycle.isConnected ? $0.connectedURL : nil }
    }

    /// The local numeric IP (of the first listening socket for a listener).
    public var localHost: String? {
        state.withLock { ($0.localAddress ?? $0.listenerAddresses.first)?.numericHost }
    }

    /// The local port; for a listener, the port it listens on (the real one after `accept(onPort: 0)`).
    public var localPort: UInt16 {
        state.withLock { UInt16(($0.localAddress ?? $0.listenerAddresses.first)?.port ?? 0) }
    }

    /// The peer's `sockaddr` bytes.
    public var connectedAddress: Data? {
        state.withLock { $0.lifecycle.isConnected ? $0.remoteAddress?.sockaddrData : nil }
    }

    /// The local `sockaddr` bytes.
    public var localAddress: Data? {
        state.withLock { ($0.localAddress ?? $0.listenerAddresses.first)?.sockaddrData }
    }

    /// Whether an IPv4 socket is in use (both may be true for a listener).
    public var isIPv4: Bool {
        state.withLock { s in
            if let address = s.remoteAddress ?? s.localAddress, !s.lifecycle.isDisconnected {
                return address.protocol == .inet
            }
            return s.listenerAddresses.contains { $0.protocol == .inet }
        }
    }

    /// Whether an IPv6 socket is in use.
    public var isIPv6: Bool {
        state.withLock { s in
            if let address = s.remoteAddress ?? s.localAddress, !s.lifecycle.isDisconnected {
                return address.protocol == .inet6
            }
            return s.listenerAddresses.contains { $0.protocol == .inet6 }
        }
    }

    /// True once the TLS handshake of this connection completed (after `socketDidSecure` was queued).
    public var isSecure: Bool { state.withLock { $0.isSecure } }

    /// The protocol ALPN chose during the TLS handshake; nil before it, or when none was agreed.
    public var negotiatedApplicationProtocol: String? { state.withLock { $0.negotiatedProtocol } }

    // MARK: utilities

    /// `0D 0A`.
    public class func crlfData() -> Data { Data([0x0D, 0x0A]) }
    /// `0D`.
    public class func crData() -> Data { Data([0x0D]) }
    /// `0A`.
    public class func lfData() -> Data { Data([0x0A]) }
    /// `00`.
    public class func zeroData() -> Data { Data([0x00]) }

    /// Resolves `host` with a blocking getaddrinfo; `localhost`/`loopback` give both loopbacks without DNS.
    /// - Returns: `sockaddr_in`/`sockaddr_in6` bytes, each with `port`.
    /// - Throws: ``GCDAsyncSocketError`` in the `.netDB` domain.
    public class func lookupHost(_ host: String, port: UInt16) throws -> [Data] {
        try HostResolver.lookup(host: host, port: Int(port)).map(\.sockaddrData)
    }

    /// The numeric host of `sockaddr` bytes; nil when they are not a full `sockaddr_in`/`sockaddr_in6`.
    public class func host(fromAddress address: Data) -> String? {
        SocketAddress(sockaddrData: address)?.ipAddress
    }

    /// The port of `sockaddr` bytes; 0 when they are not a full `sockaddr_in`/`sockaddr_in6`.
    public class func port(fromAddress address: Data) -> UInt16 {
        UInt16(SocketAddress(sockaddrData: address)?.port ?? 0)
    }

    /// Whether the bytes are a full `sockaddr_in`.
    public class func isIPv4Address(_ address: Data) -> Bool {
        SocketAddress(sockaddrData: address)?.protocol == .inet
    }

    /// Whether the bytes are a full `sockaddr_in6`.
    public class func isIPv6Address(_ address: Data) -> Bool {
        SocketAddress(sockaddrData: address)?.protocol == .inet6
    }
}
