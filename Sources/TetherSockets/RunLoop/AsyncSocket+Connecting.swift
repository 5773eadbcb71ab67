public import Foundation
import TetherConcurrency

extension AsyncSocket {
    // MARK: accepting

    /// Listens on `port` on every interface (0 picks a free port, the same for IPv4 and IPv6; see ``localPort()``).
    /// The socket's run loop is the current one. Each connection: `onSocket(_:didAcceptNewSocket:)` →
    /// `onSocket(_:wantsRunLoopForNewSocket:)` → `onSocketWillConnect` (these on the listener's run loop) →
    /// `onSocket(_:didConnectToHost:port:)` on the new socket's run loop.
    /// - Throws: ``AsyncSocketException`` without a delegate or when already started;
    ///   ``AsyncSocketError/Code/cfSocketError`` when listening fails (e.g. the port is in use).
    public func accept(onPort port: UInt16) throws {
        try accept(onInterface: nil, port: port)
    }

    /// Listens on `port` of one interface: nil or "" = every interface, "localhost"/"loopback" = the loopback
    /// addresses, else a numeric address or a name that resolves to one.
    public func accept(onInterface interface: String?, port: UInt16) throws {
        let name = interface == "" ? nil : interface
        try startLife(action: "accept", asksWillConnect: false) { core in
            try core.accept(onInterface: name, port: port)
        }
    }

    // MARK: connecting

    /// Connects to `hostname` (a name or numeric address) without a timeout; see
    /// ``connect(toHost:onPort:withTimeout:)``.
    public func connect(toHost hostname: String, onPort port: UInt16) throws {
        try connect(toHost: hostname, onPort: port, withTimeout: -1)
    }

    /// Connects to `hostname`; a negative timeout never times out.
    ///
    /// The socket's run loop is the current one. `onSocketWillConnect` is asked first, on this thread; false throws
    /// ``AsyncSocketError/Code/canceledError`` and nothing happens. Reads and writes queued before this call are
    /// discarded (the original's rule); those queued after it run once connected. Then either
    /// `onSocket(_:didConnectToHost:port:)`, or `onSocket(_:willDisconnectWithError:)` (a connect timeout is
    /// ``AsyncSocketError/Code/connectTimeoutError``; refused and unreachable come as `NSPOSIXErrorDomain`, a failed
    /// name lookup as `"kCFStreamErrorDomainNetDB"`) and `onSocketDidDisconnect`.
    /// - Throws: ``AsyncSocketException`` without a delegate or when already started.
    public func connect(toHost hostname: String, onPort port: UInt16, withTimeout timeout: TimeInterval) throws {
        try startLife(action: "connect", asksWillConnect: true) { core in
            try core.connect(toHost: hostname, onPort: port, withTimeout: timeout)
        }
    }

    /// Connects to a `sockaddr` (Linux layout, as ``connectedAddress()`` returns) without a timeout.
    public func connect(toAddress remoteAddr: Data) throws {
        try connect(toAddress: remoteAddr, viaInterfaceAddress: nil, withTimeout: -1)
    }

    /// Connects to a `sockaddr` with a timeout.
    public func connect(toAddress remoteAddr: Data, withTimeout timeout: TimeInterval) throws {
        try connect(toAddress: remoteAddr, viaInterfaceAddress: nil, withTimeout: timeout)
    }

    /// Connects to a `sockaddr` from the local `sockaddr` `interfaceAddr` (its port 0 = any port).
    /// - Throws: as ``connect(toHost:onPort:withTimeout:)``; an address that is neither IPv4 nor IPv6 throws
    ///   ``AsyncSocketError/Code/cfSocketError``.
    public func connect(
        toAddress remoteAddr: Data,
        viaInterfaceAddress interfaceAddr: Data?,
        withTimeout timeout: TimeInterval
    )
        throws
    {
        var interface: String?
        if let interfaceAddr {
            guard let host = GCDAsyncSocket.host(fromAddress: interfaceAddr) else {
                throw AsyncSocketError(
                    code: .cfSocketError,
                    underlying: AsyncSocketException(reason: "Interface address is not IPv4 or IPv6")
                )
            }
            let port = GCDAsyncSocket.port(fromAddress: interfaceAddr)
            interface = port == 0 ? host : "\(host):\(port)"
        }
        try startLife(action: "connect", asksWillConnect: true) { core in
            try core.connect(toAddress: remoteAddr, viaInterface: interface, withTimeout: timeout)
        }
    }

    /// Starts a life: the misuse checks, the veto, a new engine face reporting to a new bridge, the run loop.
    private func startLife(action: String, asksWillConnect: Bool, start: (GCDAsyncSocket) throws -> Void) throws {
        let delegate: (any AsyncSocketDelegate)? = try state.withLock { s in
            guard let delegate = s.delegate else {
                throw AsyncSocketException(reason: "Attempting to \(action) without a delegate. Set a delegate first.")
            }
            guard s.phase == .idle else {
                throw AsyncSocketException(
                    reason: "Attempting to \(action) while connected or accepting connections. Disconnect first."
                )
            }
            return delegate
        }
        if asksWillConnect, let delegate, !delegate.onSocketWillConnect(self) {
            throw AsyncSocketError(code: .canceledError)
        }
        let core = GCDAsyncSocket(eventLoopGroup: eventLoopGroup)
        core.callbackDelivery = .eventLoop
        let liveness = state.withLock { $0.liveness }
        core.proxy = state.withLock { $0.proxy }
        core.state.withLock { s in
            s.configuration.liveness = liveness
            s.configuration.servesBufferedReadsOnCaller = true
            // The peer's close is reported at once, the bytes not read in `unreadData()` (the original's close order).
            s.configuration.closesAtEndOfStreamWithUnreadBytes = true
        }
        let bridge: RunLoopSocketBridge = try state.withLock { s in
            guard s.phase == .idle else {
                throw AsyncSocketException(
                    reason: "Attempting to \(action) while connected or accepting connections. Disconnect first."
                )
            }
            s.generation &+= 1
            let bridge = RunLoopSocketBridge(owner: self, generation: s.generation)
            s.bridge = bridge
            s.core = core
            s.phase = action == "accept" ? .listening : .connecting
            s.pendingReads = 0
            s.pendingWrites = 0
            s.tlsRequested = false
            s.forbidsIO = false
            return bridge
        }
        core.delegate = bridge
        mailbox.move(to: RunLoop.current)
        do {
            try start(core)
        } catch {
            state.withLock { s in
                s.phase = .idle
                s.core = nil
                s.bridge = nil
            }
            throw AsyncSocketError(code: .cfSocketError, underlying: error)
        }
    }

    // MARK: disconnecting

    /// Closes at once: queued reads and writes are dropped without callbacks, and `onSocketDidDisconnect` runs
    /// before this returns when called on the socket's run loop thread (as the original); called from another
    /// thread, it is performed on the socket's run loop (after the callbacks already queued there) and this call
    /// does not wait for it; a socket released before then delivers nothing more, as the original, which cancelled
    /// its pending callbacks when deallocated. Never `willDisconnectWithError`. No callback for a socket that was not
    /// started.
    public func disconnect() {
        guard endLife() else { return }
        if mailbox.runLoop == nil || mailbox.isOnRunLoopThread {
            delegate?.onSocketDidDisconnect(self)
        } else {
            // Weakly, as every callback: a socket released meanwhile delivers nothing more (the original cancelled its
            // pending performs in dealloc), and one whose run loop stopped is not kept alive by its own mailbox. Not
            // tied to the current life: a `connect` right after this call starts the next life, and this one's
            // onSocketDidDisconnect still comes, before any callback of the next.
            mailbox.post { [weak self] in
                guard let self else { return }
                delegate?.onSocketDidDisconnect(self)
            }
        }
    }

    /// Closes once every queued read completed; later reads and writes are ignored and queued writes dropped.
    /// Ends with `onSocketDidDisconnect` alone.
    public func disconnectAfterReading() {
        closeAfterIO { $0.disconnectAfterReading() }
    }

    /// Closes once every queued write completed; later reads and writes are ignored and queued reads dropped.
    public func disconnectAfterWriting() {
        closeAfterIO { $0.disconnectAfterWriting() }
    }

    /// Closes once both queues drained; later reads and writes are ignored.
    public func disconnectAfterReadingAndWriting() {
        closeAfterIO { $0.disconnectAfterReadingAndWriting() }
    }

    private func closeAfterIO(_ body: (GCDAsyncSocket) -> Void) {
        let core: GCDAsyncSocket? = state.withLock { s in
            guard s.phase != .idle else { return nil }
            s.forbidsIO = true
            return s.core
        }
        if let core { body(core) }
    }

    /// Ends the current life without callbacks from the engine; returns whether one was running (its
    /// `onSocketDidDisconnect` is now due), false when the socket was not started.
    func endLife() -> Bool {
        let ended: GCDAsyncSocket?? = state.withLock { s in
            guard s.phase != .idle else { return nil }
            s.phase = .idle
            s.generation &+= 1
            defer {
                s.core = nil
                s.bridge = nil
                s.pendingReads = 0
                s.pendingWrites = 0
            }
            return .some(s.core)
        }
        guard case .some(let core) = ended else { return false }
        core?.delegate = nil
        core?.disconnect()
        return true
    }
}
