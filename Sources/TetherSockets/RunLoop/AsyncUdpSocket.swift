public import Foundation
import NIOCore
import NIOPosix
import TetherConcurrency

/// A UDP socket with the RunLoop-era CocoaAsyncSocket interface (`AsyncUdpSocket`, the first seed's class): queued
/// sends and receive requests with tags and timeouts, synchronous bind and connect, and delegate callbacks performed
/// on the run loop that was current when the socket was made.
///
/// It is a third adapter on the datagram engine under ``GCDAsyncUdpSocket`` and ``UDPSocket``: it owns a
/// ``GCDAsyncUdpSocket`` core and turns its events into the original's callbacks, posted in order to its run loop
/// (in ``runLoopModes()``, and only while the run loop runs in one of them).
///
/// ```swift
/// // On a thread whose run loop runs (the main thread, or one of your own):
/// let socket = AsyncUdpSocket(delegate: handler)
/// try socket.bind(toPort: 9999)
/// socket.receive(withTimeout: 5, tag: 1)                  // onUdpSocket(_:didReceive:withTag:fromHost:port:)
/// socket.send(Data("hi".utf8), toHost: "127.0.0.1", port: 9998, withTimeout: 5, tag: 2)
/// ```
///
/// Calls may come from any thread; made on the socket's run loop they have a defined order relative to its
/// callbacks, as in the original (which required that thread). `bind`, `connect` and the `toHost:` sends block the
/// calling thread while they resolve or connect, as the original did: never call them from an event loop.
///
/// Differences from the original (Δ):
/// - The socket's system sockets are made on first use (bind, connect, send, ``enableBroadcast(_:)``), not in `init`;
///   nothing observable changes (``localHost()`` answers "0.0.0.0" and ``localPort()`` 0 before).
/// - A bind with port 0 binds the IPv4 and IPv6 sockets to ports of their own, as the original; ``localPort()``
///   reports IPv4's. On Linux the IPv6 socket is IPv6-only.
/// - `recvfrom` errors are not reported as `didNotReceiveDataWithTag`: the engine gives a connected socket's
///   `ECONNREFUSED` to its next send (`didNotSendDataWithTag`, `NSPOSIXErrorDomain`), and no receive error closes.
/// - The engine reads a datagram only for an active request, but may read a few more in one system call; those wait
///   in the engine (never dropped) for the next request instead of in the kernel.
/// - A send binds the socket (for "Cannot bind a socket more than once.") when it is accepted; the original, once it
///   succeeded.
/// - `connect` waits for the sends queued before it (the engine's one packet queue) before it returns.
/// - A second `close…` does nothing (the original posted a second ``AsyncUdpSocketDelegate/onUdpSocketDidClose(_:)``).
/// - ``AsyncUdpSocketDelegate/onUdpSocketDidClose(_:)`` runs on the socket's run loop (the original used the run loop
///   of the thread that called `close`); always after `close` returns, but when `close` is called inside a callback
///   (or a `closeAfter…` completes in one) it runs right after that callback rather than on a separate pass.
/// - An error the engine could not survive (its socket closed under it) is not reported: the original never closed on
///   errors, and nothing else in this interface could say so.
public final class AsyncUdpSocket {
    /// Which queues a `closeAfter…` waits for.
    struct CloseAfter: OptionSet {
        let rawValue: Int
        static let sending = CloseAfter(rawValue: 1)
        static let receiving = CloseAfter(rawValue: 2)
    }

    struct State {
        weak var delegate: (any AsyncUdpSocketDelegate)?
        var userData = 0
        var isClosed = false
        /// Bound by `bind` or by a send (the original's `kDidBind`).
        var didBind = false
        var didConnect = false
        /// A `connect` is waiting for the core's answer; a second one, meanwhile, throws (it cannot take over the
        /// first one's answer).
        var isConnecting = false
        /// Set by a `closeAfter…`: sends return false and receives are ignored from then on.
        var closeAfter: CloseAfter = []
        /// Sends accepted whose result has not been delivered yet.
        var pendingSends = 0
        var receives = AsyncUdpReceiveQueue()
        var timers: [UInt64: Scheduled<Void>] = [:]
        var isOfferPosted = false
        var maxReceiveBufferSize: UInt32 = AsyncUdpSocket.defaultMaxReceiveBufferSize
    }

    /// The original's `maxReceiveBufferSize` default.
    static let defaultMaxReceiveBufferSize: UInt32 = 9_216

    let state: LockedBox<State>
    /// The engine's face this one adapts; its delegate is ``bridge``.
    let core: GCDAsyncUdpSocket
    let bridge: AsyncUdpSocketBridge
    let mailbox: RunLoopMailbox
    /// Where receive timers run (they post to the run loop when they fire).
    let timerLoop: any EventLoop

    /// A socket for both families with no delegate; it belongs to the current run loop.
    public convenience init() {
        self.init(delegate: nil, userData: 0)
    }

    /// A socket for both families; it belongs to the current run loop.
    /// - Parameter delegate: receives the callbacks; held weakly (Δ: the original held it strongly under ARC).
    public convenience init(delegate: (any AsyncUdpSocketDelegate)?) {
        self.init(delegate: delegate, userData: 0)
    }

    /// A socket for both families; it belongs to the run loop current now (`RunLoop.current`), where its callbacks
    /// are performed in the default mode until ``moveToRunLoop(_:)`` or ``setRunLoopModes(_:)``.
    /// - Parameters:
    ///   - delegate: receives the callbacks; held weakly (Δ: the original held it strongly under ARC).
    ///   - userData: any number the caller wants to keep with the socket.
    public convenience init(delegate: (any AsyncUdpSocketDelegate)?, userData: Int) {
        self.init(delegate: delegate, userData: userData, ipv4: true, ipv6: true)
    }

    /// An IPv4-only socket with no delegate (the original's `initIPv4`).
    /// - Parameter iPv4: `()`; the label names the original's initializer.
    public convenience init(iPv4: ()) {
        self.init(delegate: nil, userData: 0, ipv4: true, ipv6: false)
    }

    /// An IPv6-only socket with no delegate (the original's `initIPv6`).
    /// - Parameter iPv6: `()`; the label names the original's initializer.
    public convenience init(iPv6: ()) {
        self.init(delegate: nil, userData: 0, ipv4: false, ipv6: true)
    }

    init(delegate: (any AsyncUdpSocketDelegate)?, userData: Int, ipv4: Bool, ipv6: Bool) {
        var initial = State()
        initial.delegate = delegate
        initial.userData = userData
        state = LockedBox(initial)
        bridge = AsyncUdpSocketBridge()
        core = GCDAsyncUdpSocket(delegate: bridge)
        core.callbackDelivery = .eventLoop
        core.setIPv4Enabled(ipv4)
        core.setIPv6Enabled(ipv6)
        mailbox = RunLoopMailbox(runLoop: RunLoop.current)
        timerLoop = MultiThreadedEventLoopGroup.singleton.next()
        applyMaxReceiveBufferSize(Self.defaultMaxReceiveBufferSize)
        bridge.face = self
    }

    deinit {
        // The original cancels the DidClose it would have posted: nothing is delivered on deinitialization.
        let timers = state.withLock { s in
            s.isClosed = true
            return Array(s.timers.values)
        }
        for timer in timers { timer.cancel() }
        core.close()
    }

    // MARK: delegate and user data

    /// The delegate, held weakly (Δ: the original held it strongly under ARC).
    public var delegate: (any AsyncUdpSocketDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Any number the caller wants to keep with the socket.
    public var userData: Int {
        get { state.withLock { $0.userData } }
        set { state.withLock { $0.userData = newValue } }
    }

    // MARK: state

    /// The local numeric host: the IPv4 socket's, else the IPv6 socket's; "0.0.0.0" (or "::") before a bind or send,
    /// nil after close.
    public func localHost() -> String? {
        guard !isClosed() else { return nil }
        if let host = core.localHost() { return host }
        return core.isIPv4() ? "0.0.0.0" : core.isIPv6() ? "::" : nil
    }

    /// The local port (the IPv4 socket's when both exist); 0 before a bind or send, and after close.
    public func localPort() -> UInt16 {
        isClosed() ? 0 : core.localPort()
    }

    /// The connected peer's numeric host; nil unless connected.
    public func connectedHost() -> String? {
        isClosed() ? nil : core.connectedHost()
    }

    /// The connected peer's port; 0 unless connected.
    public func connectedPort() -> UInt16 {
        isClosed() ? 0 : core.connectedPort()
    }

    /// Whether `connect` succeeded and the socket is not closed.
    public func isConnected() -> Bool {
        !isClosed() && core.isConnected()
    }

    /// Whether a `close…` closed the socket (true from the moment ``close()`` is called; for good).
    public func isClosed() -> Bool {
        state.withLock { $0.isClosed }
    }

    /// Whether the socket still has its IPv4 socket (not made IPv6-only by ``init(iPv6:)``, a bind, a connect or a
    /// multicast join, and not closed).
    public func isIPv4() -> Bool {
        !isClosed() && core.isIPv4()
    }

    /// Whether the socket still has its IPv6 socket (the mirror of ``isIPv4()``).
    public func isIPv6() -> Bool {
        !isClosed() && core.isIPv6()
    }

    /// The MTU of the interface that holds the socket's local address (for a connected socket, the address the
    /// kernel chose for the peer): 65,536 for a socket connected over loopback on Linux. 0 when the socket is unbound
    /// or bound to the wildcard address, when closed, or when the interface is unknown.
    ///
    /// Δ: the original passed the descriptor to `if_indextoname` as an interface index, so it answered 0 or an
    /// unrelated interface's MTU.
    public func maximumTransmissionUnit() -> UInt32 {
        guard !isClosed() else { return 0 }
        let fd = core.state.withLock { s in s.sockets.flatMap { $0.fd4 ?? $0.fd6 } }
        guard let fd, let local = try? SocketAddress(localAddressOf: fd), let host = local.ipAddress else { return 0 }
        guard host != "0.0.0.0", host != "::" else { return 0 }
        let devices = (try? System.enumerateDevices()) ?? []
        guard let device = devices.first(where: { $0.address?.ipAddress == host }) else { return 0 }
        let path = "/sys/class/net/\(device.name)/mtu"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        return UInt32(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// The largest datagram delivered (default 9,216 bytes); longer ones are truncated.
    public func maxReceiveBufferSize() -> UInt32 {
        state.withLock { $0.maxReceiveBufferSize }
    }

    /// Sets the largest datagram delivered; applies from the next datagram read. Datagrams are at most 65,507 bytes
    /// over IPv4 and 65,527 over IPv6, so larger values truncate nothing.
    public func setMaxReceiveBufferSize(_ max: UInt32) {
        state.withLock { $0.maxReceiveBufferSize = max }
        applyMaxReceiveBufferSize(max)
    }

    private func applyMaxReceiveBufferSize(_ max: UInt32) {
        core.setMaxReceiveIPv4BufferSize(UInt16(clamping: max))
        core.setMaxReceiveIPv6BufferSize(max)
    }

    // MARK: run loops

    /// Performs later callbacks on `runLoop`; callbacks already posted to the old run loop still run there.
    /// - Returns: false when not called on the thread of the socket's current run loop (nothing changes).
    public func moveToRunLoop(_ runLoop: RunLoop) -> Bool {
        guard mailbox.isOnRunLoopThread else { return false }
        mailbox.move(to: runLoop)
        return true
    }

    /// The run-loop modes callbacks are performed in (default `[.default]`).
    /// - Returns: false for an empty array (nothing changes).
    public func setRunLoopModes(_ runLoopModes: [RunLoop.Mode]) -> Bool {
        guard !runLoopModes.isEmpty else { return false }
        mailbox.modes = runLoopModes
        return true
    }

    /// The modes callbacks are performed in (a copy).
    public func runLoopModes() -> [RunLoop.Mode] {
        mailbox.modes
    }

    // MARK: delivery

    /// Posts `body` to the socket's run loop; it does not run if the socket closed (or went away) meanwhile.
    func post(_ body: @escaping (AsyncUdpSocket) -> Void) {
        mailbox.post { [weak self] in
            guard let self, !self.isClosed() else { return }
            body(self)
        }
    }
}

// Sendable: every mutable member is behind `state`'s lock; the weakly held delegate is read under it and called on
// the socket's run loop only (the mailbox), never through the state.
extension AsyncUdpSocket: @unchecked Sendable {}
