public import Dispatch
public import Foundation
public import Logging
public import NIOCore
public import NIOPosix
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decides whether a received datagram reaches the delegate; may put anything into `context`, which the delegate
/// receives as `filterContext` (parse once in the filter, use the result in the delegate).
public typealias GCDAsyncUdpSocketReceiveFilterBlock =
    @Sendable (_ data: Data, _ address: Data, _ context: inout Any?) -> Bool
/// Decides whether a datagram is sent; `false` drops it, but the send is still reported as done.
public typealias GCDAsyncUdpSocketSendFilterBlock = @Sendable (_ data: Data, _ address: Data, _ tag: Int) -> Bool

/// A UDP socket with CocoaAsyncSocket's `GCDAsyncUdpSocket` interface: queued sends with tags and timeouts,
/// receive modes, filters, multicast and broadcast, and callbacks on a delegate queue.
///
/// Sockets (one per enabled family) are created lazily by bind, connect, the first send, `enableBroadcast` or
/// `enableReusePort`, and run on one SwiftNIO event loop, the same datagram engine that serves ``UDPSocket``.
///
/// ```swift
/// let socket = GCDAsyncUdpSocket(delegate: receiver, delegateQueue: .main)
/// try socket.bind(toPort: 9999)
/// try socket.beginReceiving()
/// socket.send(Data("hello".utf8), toHost: "127.0.0.1", port: 9998, withTimeout: 5, tag: 1)
/// ```
///
/// Differences from the original (Δ): one send's error (`EMSGSIZE`, `EACCES`, `ECONNREFUSED`, unreachable) fails that
/// send only and the socket stays open; zero-length datagrams are delivered; on Linux an IPv6 socket is IPv6-only
/// and receives only the multicast groups it joined (`IP_MULTICAST_ALL` off), as on Darwin. As the original, a socket
/// dropped without ``close()`` closes its system sockets when it is deinitialized (no delegate callback follows).
public final class GCDAsyncUdpSocket: Sendable {
    enum Preference: Sendable {
        case neutral, ipv4, ipv6
    }

    enum ReceiveMode: Sendable {
        case off, once, continuous
    }

    struct Configuration {
        var isIPv4Enabled = true
        var isIPv6Enabled = true
        var preference = Preference.neutral
        var maxReceiveIPv4 = UInt16.max
        var maxReceiveIPv6 = UInt32(UInt16.max)
        var maxSend = UInt16.max
        var callbackDelivery = GCDAsyncSocket.CallbackDelivery.delegateQueue
    }

    struct ReceiveFilter {
        var block: GCDAsyncUdpSocketReceiveFilterBlock
        var queue: DispatchQueue?
        var isAsynchronous: Bool
    }

    struct SendFilter {
        var block: GCDAsyncUdpSocketSendFilterBlock
        var queue: DispatchQueue?
        var isAsynchronous: Bool
    }

    /// The sockets of one life (from creation to close).
    struct Sockets {
        var life: UInt64
        var fd4: Int32?
        var fd6: Int32?
        var isBound = false
        var runtime: UDPLife?
        var isConnecting = false
        var connectedAddress: SocketAddress?
        var local4: SocketAddress?
        var local6: SocketAddress?
        /// Where this life's callbacks run, and its event loop (the socket's, for every life).
        var delivery: GCDAsyncSocket.CallbackDelivery
        var loop: any EventLoop
        /// Event-loop delivery's order keeper.
        var callbacks: UDPLoopCallbacks
    }

    struct State {
        weak var delegate: (any GCDAsyncUdpSocketDelegate)?
        var delegateQueue: DispatchQueue?
        var configuration = Configuration()
        var userData: (any Sendable)?
        var receiveFilter: ReceiveFilter?
        var sendFilter: SendFilter?
        var lives: UInt64 = 0
        var sockets: Sockets?
        /// How many times `close()` was called: a packet that reaches an ended life goes to a new one only if no
        /// `close()` came after it was asked for.
        var closes: UInt64 = 0
        /// The event loop every life runs on, picked when the first one starts.
        var loop: (any EventLoop)?
    }

    let state: LockedBox<State>
    /// Where callbacks for the delegate queue wait for it, in order.
    let mailbox = UDPDelegateMailbox()
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger?

    /// Creates a socket; no system socket exists until it is bound, connected or used.
    /// - Parameters:
    ///   - delegate: receives the callbacks; held weakly.
    ///   - delegateQueue: where callbacks run.
    ///   - eventLoopGroup: the engine's event loops; the shared singleton by default.
    ///   - logger: where to log at debug level; nothing is logged without one.
    public init(
        delegate: (any GCDAsyncUdpSocketDelegate)? = nil,
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

    deinit {
        let sockets = state.withLock { $0.sockets }
        if let sockets { Self.release(sockets) }
    }

    // MARK: delegate

    /// The delegate, held weakly.
    public func delegate() -> (any GCDAsyncUdpSocketDelegate)? { state.withLock { $0.delegate } }
    /// Sets the delegate.
    public func setDelegate(_ delegate: (any GCDAsyncUdpSocketDelegate)?) { state.withLock { $0.delegate = delegate } }
    /// Sets the delegate; it takes effect before this returns.
    public func synchronouslySetDelegate(_ delegate: (any GCDAsyncUdpSocketDelegate)?) { setDelegate(delegate) }
    /// The queue callbacks run on.
    public func delegateQueue() -> DispatchQueue? { state.withLock { $0.delegateQueue } }
    /// Sets the queue callbacks run on.
    public func setDelegateQueue(_ delegateQueue: DispatchQueue?) {
        state.withLock { $0.delegateQueue = delegateQueue }
    }
    /// Sets the delegate queue; it takes effect before this returns.
    public func synchronouslySetDelegateQueue(_ delegateQueue: DispatchQueue?) { setDelegateQueue(delegateQueue) }
    /// Sets the delegate and its queue together.
    public func setDelegate(_ delegate: (any GCDAsyncUdpSocketDelegate)?, delegateQueue: DispatchQueue?) {
        state.withLock {
            $0.delegate = delegate
            $0.delegateQueue = delegateQueue
        }
    }
    /// Sets the delegate and its queue together, before this returns.
    public func synchronouslySetDelegate(_ delegate: (any GCDAsyncUdpSocketDelegate)?, delegateQueue: DispatchQueue?) {
        setDelegate(delegate, delegateQueue: delegateQueue)
    }

    // MARK: configuration

    /// Whether an IPv4 socket is used (default true).
    public func isIPv4Enabled() -> Bool { state.withLock { $0.configuration.isIPv4Enabled } }
    /// Enables or disables IPv4 for sockets created from now on.
    public func setIPv4Enabled(_ flag: Bool) { state.withLock { $0.configuration.isIPv4Enabled = flag } }
    /// Whether an IPv6 socket is used (default true).
    public func isIPv6Enabled() -> Bool { state.withLock { $0.configuration.isIPv6Enabled } }
    /// Enables or disables IPv6 for sockets created from now on.
    public func setIPv6Enabled(_ flag: Bool) { state.withLock { $0.configuration.isIPv6Enabled = flag } }
    /// Whether IPv4 addresses win when a name resolves to both families.
    public func isIPv4Preferred() -> Bool { state.withLock { $0.configuration.preference == .ipv4 } }
    /// Whether IPv6 addresses win when a name resolves to both families.
    public func isIPv6Preferred() -> Bool { state.withLock { $0.configuration.preference == .ipv6 } }
    /// Whether the first resolved address wins (the default).
    public func isIPVersionNeutral() -> Bool { state.withLock { $0.configuration.preference == .neutral } }
    /// Prefers IPv4 addresses.
    public func setPreferIPv4() { state.withLock { $0.configuration.preference = .ipv4 } }
    /// Prefers IPv6 addresses.
    public func setPreferIPv6() { state.withLock { $0.configuration.preference = .ipv6 } }
    /// Uses the first resolved address.
    public func setIPVersionNeutral() { state.withLock { $0.configuration.preference = .neutral } }
    /// The largest IPv4 datagram delivered; longer ones are truncated (default 65,535).
    public func maxReceiveIPv4BufferSize() -> UInt16 { state.withLock { $0.configuration.maxReceiveIPv4 } }
    /// Sets the largest IPv4 datagram delivered.
    public func setMaxReceiveIPv4BufferSize(_ max: UInt16) {
        state.withLock { $0.configuration.maxReceiveIPv4 = max }
    }
    /// The largest IPv6 datagram delivered; longer ones are truncated (default 65,535).
    public func maxReceiveIPv6BufferSize() -> UInt32 { state.withLock { $0.configuration.maxReceiveIPv6 } }
    /// Sets the largest IPv6 datagram delivered.
    public func setMaxReceiveIPv6BufferSize(_ max: UInt32) {
        state.withLock { $0.configuration.maxReceiveIPv6 = max }
    }
    /// `SO_SNDBUF` of sockets created from now on (default 65,535).
    public func maxSendBufferSize() -> UInt16 { state.withLock { $0.configuration.maxSend } }
    /// Sets `SO_SNDBUF` for sockets created from now on; set it before the first bind, send or connect.
    public func setMaxSendBufferSize(_ max: UInt16) { state.withLock { $0.configuration.maxSend = max } }

    /// Where callbacks run (as ``GCDAsyncSocket/callbackDelivery``): the delegate queue (default, the original), or
    /// the socket's event loop, inline, without a thread hop; then callbacks must not block, and no delegate queue
    /// is needed. Takes effect when the socket's next life starts (its first bind, connect or send).
    public var callbackDelivery: GCDAsyncSocket.CallbackDelivery {
        get { state.withLock { $0.configuration.callbackDelivery } }
        set { state.withLock { $0.configuration.callbackDelivery = newValue } }
    }
    /// Any value the caller wants to keep with the socket.
    public func userData() -> (any Sendable)? { state.withLock { $0.userData } }
    /// Sets the caller's value.
    public func setUserData(_ userData: (any Sendable)?) { state.withLock { $0.userData = userData } }

    // MARK: diagnostics

    /// The local `sockaddr` bytes: the IPv4 socket's if it exists, else the IPv6 socket's.
    public func localAddress() -> Data? { localSocketAddress()?.sockaddrData }
    /// The local numeric host.
    public func localHost() -> String? { localSocketAddress()?.numericHost }
    /// The local port, 0 when not bound.
    public func localPort() -> UInt16 { UInt16(localSocketAddress()?.port ?? 0) }
    /// The IPv4 socket's local `sockaddr` bytes.
    public func localAddress_IPv4() -> Data? { state.withLock { $0.sockets?.local4 }?.sockaddrData }
    /// The IPv4 socket's local host.
    public func localHost_IPv4() -> String? { state.withLock { $0.sockets?.local4 }?.numericHost }
    /// The IPv4 socket's local port.
    public func localPort_IPv4() -> UInt16 { UInt16(state.withLock { $0.sockets?.local4 }?.port ?? 0) }
    /// The IPv6 socket's local `sockaddr` bytes.
    public func localAddress_IPv6() -> Data? { state.withLock { $0.sockets?.local6 }?.sockaddrData }
    /// The IPv6 socket's local host.
    public func localHost_IPv6() -> String? { state.withLock { $0.sockets?.local6 }?.numericHost }
    /// The IPv6 socket's local port.
    public func localPort_IPv6() -> UInt16 { UInt16(state.withLock { $0.sockets?.local6 }?.port ?? 0) }
    /// The connected peer's `sockaddr` bytes; nil unless connected.
    public func connectedAddress() -> Data? { state.withLock { $0.sockets?.connectedAddress }?.sockaddrData }
    /// The connected peer's numeric host.
    public func connectedHost() -> String? { state.withLock { $0.sockets?.connectedAddress }?.numericHost }
    /// The connected peer's port, 0 unless connected.
    public func connectedPort() -> UInt16 {
        UInt16(state.withLock { $0.sockets?.connectedAddress }?.port ?? 0)
    }
    /// Whether `connect` succeeded.
    public func isConnected() -> Bool { state.withLock { $0.sockets?.connectedAddress != nil } }
    /// True until sockets exist (a fresh instance), and after close.
    public func isClosed() -> Bool { state.withLock { $0.sockets == nil } }
    /// Before sockets exist: whether IPv4 is enabled; afterwards whether the IPv4 socket exists.
    public func isIPv4() -> Bool {
        state.withLock { s in s.sockets.map { $0.fd4 != nil } ?? s.configuration.isIPv4Enabled }
    }
    /// Before sockets exist: whether IPv6 is enabled; afterwards whether the IPv6 socket exists.
    public func isIPv6() -> Bool {
        state.withLock { s in s.sockets.map { $0.fd6 != nil } ?? s.configuration.isIPv6Enabled }
    }

    private func localSocketAddress() -> SocketAddress? {
        state.withLock { s in s.sockets.flatMap { $0.local4 ?? $0.local6 } }
    }

    // MARK: utilities

    /// The numeric host of `sockaddr` bytes, nil when they are not an IPv4 or IPv6 address.
    public class func host(fromAddress address: Data) -> String? { SocketAddress(sockaddrData: address)?.numericHost }
    /// The port of `sockaddr` bytes, 0 when they are not an IPv4 or IPv6 address.
    public class func port(fromAddress address: Data) -> UInt16 {
        UInt16(SocketAddress(sockaddrData: address)?.port ?? 0)
    }
    /// `AF_INET`, `AF_INET6`, or `AF_UNSPEC` when the bytes are not an address.
    public class func family(fromAddress address: Data) -> Int32 {
        switch SocketAddress(sockaddrData: address)?.protocol {
        case .inet: AF_INET
        case .inet6: AF_INET6
        default: AF_UNSPEC
        }
    }
    /// Whether the bytes are a `sockaddr_in`.
    public class func isIPv4Address(_ address: Data) -> Bool { family(fromAddress: address) == AF_INET }
    /// Whether the bytes are a `sockaddr_in6`.
    public class func isIPv6Address(_ address: Data) -> Bool { family(fromAddress: address) == AF_INET6 }
}

// Sendable: the one non-Sendable member, the weakly held delegate, is read under the socket's lock and called only on
// the delegate queue (or the life's event loop), never through the state.
extension GCDAsyncUdpSocket.State: @unchecked Sendable {}
