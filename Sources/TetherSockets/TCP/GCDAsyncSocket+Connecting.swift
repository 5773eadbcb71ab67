public import Foundation
import Logging
public import NIOCore
public import NIOPosix
import TetherConcurrency

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension GCDAsyncSocket {
    // MARK: connecting

    /// Starts connecting to `host` (a name, an IP literal, `localhost`) with no timeout.
    /// - Throws: ``GCDAsyncSocketError`` `.badConfig` (no delegate, already started) or `.badParam` (empty host).
    ///   The outcome arrives as `didConnectToHost` or `socketDidDisconnect`.
    public func connect(toHost host: String, onPort port: UInt16) throws {
        try connect(toHost: host, onPort: port, viaInterface: nil, withTimeout: -1)
    }

    /// Starts connecting to `host`; `timeout` (seconds, negative = none) covers name resolution and connecting.
    public func connect(toHost host: String, onPort port: UInt16, withTimeout timeout: TimeInterval) throws {
        try connect(toHost: host, onPort: port, viaInterface: nil, withTimeout: timeout)
    }

    /// Starts connecting to `host` from a local interface (`"eth0"`, `"127.0.0.1"`, `"localhost"`, optionally
    /// `":port"` to fix the local port).
    public func connect(
        toHost host: String,
        onPort port: UInt16,
        viaInterface interface: String?,
        withTimeout timeout: TimeInterval
    ) throws {
        guard !host.isEmpty else {
            throw GCDAsyncSocketError.badParam(
                "Invalid host parameter (nil or \"\"). Should be a domain name or IP address string."
            )
        }
        let local = try InterfaceResolver.resolve(interface)
        try startConnecting(target: .host(host, port: Int(port)), local: local, url: nil, timeout: timeout)
    }

    /// Starts connecting to `sockaddr_in`/`sockaddr_in6` bytes.
    public func connect(toAddress remoteAddr: Data) throws {
        try connect(toAddress: remoteAddr, viaInterface: nil, withTimeout: -1)
    }

    /// Starts connecting to `sockaddr_in`/`sockaddr_in6` bytes with a timeout.
    public func connect(toAddress remoteAddr: Data, withTimeout timeout: TimeInterval) throws {
        try connect(toAddress: remoteAddr, viaInterface: nil, withTimeout: timeout)
    }

    /// Starts connecting to `sockaddr_in`/`sockaddr_in6` bytes from a local interface.
    /// - Throws: `.badParam` for bytes that are not a full `sockaddr_in`/`sockaddr_in6`, or of a disabled family.
    public func connect(
        toAddress remoteAddr: Data,
        viaInterface interface: String?,
        withTimeout timeout: TimeInterval
    ) throws {
        guard let address = SocketAddress(sockaddrData: remoteAddr) else {
            throw GCDAsyncSocketError.badParam("A valid IPv4 or IPv6 address was not given")
        }
        let configuration = state.withLock { $0.configuration }
        if address.protocol == .inet && !configuration.isIPv4Enabled {
            throw GCDAsyncSocketError.badParam("IPv4 has been disabled and an IPv4 address was passed.")
        }
        if address.protocol == .inet6 && !configuration.isIPv6Enabled {
            throw GCDAsyncSocketError.badParam("IPv6 has been disabled and an IPv6 address was passed.")
        }
        let local = try InterfaceResolver.resolve(interface)
        try startConnecting(target: .address(address), local: local, url: nil, timeout: timeout)
    }

    /// Starts connecting to a unix-domain socket at `url`'s path.
    public func connect(to url: URL, withTimeout timeout: TimeInterval) throws {
        let path = url.path
        guard !path.isEmpty else { throw GCDAsyncSocketError.badParam("Invalid unix domain socket url.") }
        try startConnecting(target: .unixPath(path), local: nil, url: url, timeout: timeout)
    }

    /// Adopts a connected `AF_INET`/`AF_INET6` socket descriptor; the socket is connected when this returns.
    /// - Throws: `.other` when the descriptor is not a connected IPv4/IPv6 socket.
    public convenience init(
        fromConnectedSocketFD socketFD: Int32,
        delegate: (any GCDAsyncSocketDelegate)? = nil,
        delegateQueue: DispatchQueue? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.init(delegate: delegate, delegateQueue: delegateQueue, eventLoopGroup: eventLoopGroup)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socketFD, $0, &length) }
        }
        guard status == 0 else {
            throw GCDAsyncSocketError(code: .other, message: "Attempt to adopt a socket that is not connected")
        }
        let family = Int32(storage.ss_family)
        guard family == AF_INET || family == AF_INET6 else {
            throw GCDAsyncSocketError(code: .other, message: "socket FD is neither IPv4 nor IPv6")
        }
        let remote = try? SocketAddress(peerAddressOf: socketFD)
        let localAddress = try? SocketAddress(localAddressOf: socketFD)
        let loop = eventLoopGroup.next()
        let adapter = state.withLock { s -> EngineAdapter in
            let life = s.lifecycle.startConnected()
            s.delivery = s.configuration.callbackDelivery
            s.remoteAddress = remote
            s.localAddress = localAddress
            return makeEngine(&s, life: life, loop: loop, reportsConnect: delegate != nil)
        }
        // Sendable: the adapter is used on its event loop only, where this closure runs.
        let transfer = UncheckedSendableBox(adapter)
        loop.execute {
            ClientBootstrap(group: loop)
                .engineChannelOptions()
                .withConnectedSocket(socketFD)
                .whenComplete { result in
                    transfer.value.channelConnected(result)
                }
        }
    }

    private func startConnecting(
        target: TCPConnector.Target,
        local: InterfaceResolver.Resolved?,
        url: URL?,
        timeout: TimeInterval
    ) throws {
        let loop = eventLoopGroup.next()
        let (adapter, options) = try state.withLock { s -> (EngineAdapter, TCPConnector.Options) in
            try checkStartable(s)
            let life = s.lifecycle.startConnecting()
            s.delivery = s.configuration.callbackDelivery
            s.connectedURL = url
            if case .host(let host, _) = target { s.connectHost = host } else { s.connectHost = nil }
            var options = TCPConnector.Options()
            options.ipv4Enabled = s.configuration.isIPv4Enabled
            options.ipv6Enabled = s.configuration.isIPv6Enabled
            options.preferIPv4 = s.configuration.isIPv4PreferredOverIPv6
            options.alternateDelay = TimeoutValue.delay(s.configuration.alternateAddressDelay)
            options.local = local
            options.timeout = TimeoutValue.timeout(timeout)
            options.proxy = s.configuration.proxy
            s.proxiedTarget = s.configuration.proxy == nil ? nil : ProxyTarget(target)
            return (makeEngine(&s, life: life, loop: loop, reportsConnect: true), options)
        }
        // Sendable: the adapter is used on its event loop only, where this closure runs.
        let transfer = UncheckedSendableBox(adapter)
        loop.execute {
            let adapter = transfer.value
            guard let engine = adapter.engineBox, !engine.isClosed else { return }
            let connector = TCPConnector(target: target, options: options, eventLoop: loop)
            adapter.connector = connector
            connector.start().assumeIsolated().whenComplete { result in
                adapter.connector = nil
                adapter.channelConnected(result)
            }
        }
    }

    /// Under the lock: the configuration checks every start makes.
    func checkStartable(_ s: State, action: String = "connect") throws {
        if s.delegate == nil {
            throw GCDAsyncSocketError.badConfig("Attempting to \(action) without a delegate. Set a delegate first.")
        }
        if s.configuration.callbackDelivery == .delegateQueue && s.delegateQueue == nil {
            throw GCDAsyncSocketError.badConfig(
                "Attempting to \(action) without a delegate queue. Set a delegate queue first."
            )
        }
        if !s.configuration.isIPv4Enabled && !s.configuration.isIPv6Enabled {
            throw GCDAsyncSocketError.badConfig(
                "Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first."
            )
        }
        if !s.lifecycle.canStart {
            throw GCDAsyncSocketError.badConfig(
                "Attempting to \(action) while connected or accepting connections. Disconnect first."
            )
        }
    }

    /// Under the lock: the engine of a new life, retained (through its adapter) until it closes.
    func makeEngine(_ s: inout State, life: UInt64, loop: any EventLoop, reportsConnect: Bool) -> EngineAdapter {
        let adapter = EngineAdapter(socket: self, life: life, eventLoop: loop, reportsConnect: reportsConnect)
        var policy = SocketEngine.Policy.delegateFace
        policy.autoDisconnectOnClosedReadStream = s.configuration.autoDisconnectOnClosedReadStream
        policy.closesAtEndOfStreamWithUnreadBytes = s.configuration.closesAtEndOfStreamWithUnreadBytes
        // Both are the RunLoop era's rules (an `AsyncSocket`'s core).
        policy.keepsInputAfterWritingClose = s.configuration.closesAtEndOfStreamWithUnreadBytes
        let engine = SocketEngine(eventLoop: loop, owner: adapter, policy: policy)
        engine.prepareLiveness(s.configuration.liveness)
        adapter.attach(engine)
        s.adapter = adapter
        s.progress = engine.progress
        s.machine = engine.sharedMachine
        return adapter
    }

    // MARK: disconnecting

    /// Closes at once: queued reads and writes are dropped without callbacks, and one `socketDidDisconnect` with a
    /// nil error follows every callback already queued. No-op on a socket that is not started.
    ///
    /// Over TLS the bytes already handed to the connection still go out, ahead of close_notify, while it waits up to
    /// 5 s for the peer's; past that the stream is cut and ends without close_notify (<doc:HowTheEngineWorks>).
    public func disconnect() {
        let (adapter, listeners): (EngineAdapter?, [any Channel]) = state.withLock { s in
            let life = s.lifecycle.life
            guard s.lifecycle.ended(life: life) else { return (nil, []) }
            enqueueDisconnectCallback(&s, error: nil)
            let adapter = s.adapter
            return (adapter, clearLife(&s))
        }
        if adapter != nil || !listeners.isEmpty { logger?.debug("disconnected on request") }
        adapter?.withEngine { engine in engine.close(error: nil) }
        for listener in listeners { listener.close(promise: nil) }
    }

    /// Closes once every queued read completed; new reads and writes are refused, queued writes dropped.
    public func disconnectAfterReading() {
        requestCloseAfterIO { $0.closeAfterReading() }
    }

    /// Closes once every queued write completed; new reads and writes are refused, queued reads dropped.
    public func disconnectAfterWriting() {
        requestCloseAfterIO { $0.closeAfterWriting() }
    }

    /// Closes once both queues drained; new reads and writes are refused.
    public func disconnectAfterReadingAndWriting() {
        requestCloseAfterIO { $0.closeAfterReadingAndWriting() }
    }

    private func requestCloseAfterIO(_ body: @escaping (SocketEngine) -> Void) {
        enum Verdict {
            case none
            case engine(EngineAdapter)
            case listener
        }
        let verdict: Verdict = state.withLock { s in
            if s.lifecycle.phase == .listening { return .listener }
            guard s.lifecycle.closeRequestedAfterIO(), let adapter = s.adapter else { return .none }
            return .engine(adapter)
        }
        switch verdict {
        case .none: break
        case .listener: disconnect()
        case .engine(let adapter): adapter.withEngine(body)
        }
    }
}

extension EngineAdapter {
    /// On the loop: the connector (or adoption) delivered a channel, or failed.
    func channelConnected(_ result: Result<any Channel, any Error>) {
        guard let engine = engineBox else {
            if case .success(let channel) = result { channel.close(promise: nil) }
            return
        }
        switch result {
        case .success(let channel):
            if engine.isClosed {
                channel.close(promise: nil)
                return
            }
            do {
                try channel.pipeline.syncOperations.addHandler(engine)
            } catch {
                channel.close(promise: nil)
                engine.close(error: .wrapping(error, function: "connect"))
            }
        case .failure(let error):
            engine.close(error: .wrapping(error, function: "connect"))
        }
    }
}
