import Dispatch
public import Foundation
import NIOCore
import NIOPosix
import TetherConcurrency

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension GCDAsyncUdpSocket {
    // MARK: binding and connecting

    /// Binds every enabled family to `port` on all interfaces (0 = each family picks a free port).
    /// - Throws: ``GCDAsyncUdpSocketError``: `.badConfig` (bound already, connected, no delegate, both families off) or
    ///   the POSIX error of `bind`.
    public func bind(toPort port: UInt16) throws {
        try bind(toPort: port, interface: nil)
    }

    /// Binds to `port` on `interface`: a name (`"lo"`), an IP address, `"localhost"`/`"loopback"`, or nil for all.
    /// Only the families the interface has are bound; the other family's socket is closed.
    /// - Throws: as ``bind(toPort:)``, plus `.badParam` for an unknown interface.
    public func bind(toPort port: UInt16, interface: String?) throws {
        let resolved: InterfaceResolver.Resolved?
        do {
            resolved = try InterfaceResolver.resolve(interface, defaultPort: Int(port))
        } catch {
            throw GCDAsyncUdpSocketError.wrapping(error, function: "bind")
        }
        let ipv4 = resolved.map { $0.ipv4 } ?? (try? SocketAddress(ipAddress: "0.0.0.0", port: Int(port)))
        let ipv6 = resolved.map { $0.ipv6 } ?? (try? SocketAddress(ipAddress: "::", port: Int(port)))
        try bind(ipv4: ipv4, ipv6: ipv6)
    }

    /// Binds to a `sockaddr_in`/`sockaddr_in6`; the other family's socket is closed.
    /// - Throws: as ``bind(toPort:)``, plus `.badParam` for malformed bytes.
    public func bind(toAddress localAddr: Data) throws {
        guard let address = SocketAddress(sockaddrData: localAddr) else {
            throw GCDAsyncUdpSocketError.badParam("A valid IPv4 or IPv6 address was not given")
        }
        try bind(
            ipv4: address.protocol == .inet ? address : nil,
            ipv6: address.protocol == .inet6 ? address : nil
        )
    }

    func bind(ipv4: SocketAddress?, ipv6: SocketAddress?) throws {
        try state.withLock { s in
            try check(.bind, s)
            let useIPv4 = s.configuration.isIPv4Enabled ? ipv4 : nil
            let useIPv6 = s.configuration.isIPv6Enabled ? ipv6 : nil
            guard useIPv4 != nil || useIPv6 != nil else {
                throw GCDAsyncUdpSocketError.badParam(
                    "Unknown interface, or its address family is disabled. Specify a valid interface."
                )
            }
            try createSocketsIfNeeded(&s)
            do {
                try bindSockets(&s, ipv4: useIPv4, ipv6: useIPv6)
            } catch {
                // The original closes the sockets when binding fails (silently: no life was visible yet).
                let sockets = s.sockets
                s.sockets = nil
                if let sockets { Self.release(sockets) }
                throw error
            }
        }
    }

    /// Connects to `host` (resolved asynchronously): the result arrives as `didConnectToAddress`/`didNotConnect`.
    /// The connect waits behind the sends queued before it.
    /// - Throws: `.badConfig` (connected already, no delegate, both families off), `.badParam` for an empty host.
    public func connect(toHost host: String, onPort port: UInt16) throws {
        guard !host.isEmpty else { throw GCDAsyncUdpSocketError.badParam("Invalid host parameter (empty)") }
        try startConnect(.host(host, port: Int(port)))
    }

    /// Connects to `sockaddr` bytes.
    /// - Throws: as ``connect(toHost:onPort:)``, `.badParam` for malformed bytes.
    public func connect(toAddress remoteAddr: Data) throws {
        guard let address = SocketAddress(sockaddrData: remoteAddr) else {
            throw GCDAsyncUdpSocketError.badParam("A valid IPv4 or IPv6 address was not given")
        }
        try startConnect(.address(address))
    }

    /// Queues the connect under the lock (so that it reaches the loop in the order it was asked for).
    private func startConnect(_ target: UDPDestination) throws {
        try state.withLock { s in try startConnect(&s).enqueue(.connect(target), closes: s.closes) }
    }

    private func startConnect(_ s: inout State) throws -> UDPLife {
        try check(.connect, s)
        let runtime = try ensureStarted(&s)
        s.sockets?.isConnecting = true
        return runtime
    }

    /// A connect that reached life `life` after it ended (right after `closeAfterSending` emptied the queue, or a
    /// fatal error): connects in a new life, as the original's next connect opened new sockets; `didNotConnect`
    /// when it cannot start there (misuse in the new state, sockets that cannot be made). Dropped without a callback
    /// when a `close()` came after it was asked for (`closes` is the count then), as that close drops queued packets.
    func connectAgain(_ target: UDPDestination, endedLife life: UInt64, closes: UInt64) {
        let started: Result<UDPLife, any Error>? = state.withLock { s in
            guard s.closes == closes else { return nil }
            guard s.sockets?.life != life else {
                return .failure(GCDAsyncUdpSocketError(code: .closed, message: "Socket closed"))
            }
            return Result { try startConnect(&s) }
        }
        switch started {
        case nil: return
        case .success(let runtime):
            // A `close()` since ending that life drops the connect, as it drops queued packets.
            _ = hand(.connect(target), to: runtime, closes: closes)
        case .failure(let error):
            let answer = GCDAsyncUdpSocketError.wrapping(error, function: "connect")
            let current = state.withLock { $0.sockets?.life ?? $0.lives }
            deliver(life: current, evenWhenClosed: true) { sock, delegate in
                delegate.udpSocket(sock, didNotConnect: answer)
            }
        }
    }

    // MARK: closing

    /// Closes at once: queued sends are dropped without callbacks (and never sent); a datagram the kernel took
    /// before the close, even one sent from another thread at that moment, is reported sent before
    /// `udpSocketDidClose(nil)`, which follows if sockets existed. The socket can be used again (new sockets on
    /// next use).
    public func close() {
        lifeEnded(nil, error: nil)
    }

    /// Closes once every queued send is done (at once when none is queued).
    public func closeAfterSending() {
        let runtime: UDPLife? = state.withLock { s in
            guard let sockets = s.sockets else { return nil }
            return sockets.runtime
        }
        guard let runtime else {
            close()
            return
        }
        runtime.closeAfterSending()
    }

    // MARK: internals (under the state lock)

    /// Throws the original's error when `call` is misuse in this state (decided by ``UDPStateMachine/misuse(of:in:)``).
    func check(_ call: UDPStateMachine.Call, _ s: State) throws {
        let phase: UDPStateMachine.Phase
        switch s.sockets {
        case nil: phase = .none
        case let sockets? where sockets.connectedAddress != nil: phase = .connected
        case let sockets? where sockets.isConnecting: phase = .connecting
        case let sockets? where sockets.isBound: phase = .bound
        case .some: phase = .created
        }
        let view = UDPStateMachine.FaceView(
            phase: phase,
            hasDelegate: s.delegate != nil,
            hasDeliveryTarget: s.delegateQueue != nil || s.configuration.callbackDelivery == .eventLoop,
            hasEnabledFamily: s.configuration.isIPv4Enabled || s.configuration.isIPv6Enabled
        )
        if let error = UDPStateMachine.misuse(of: call, in: view) { throw error }
    }

    func createSocketsIfNeeded(_ s: inout State) throws {
        guard s.sockets == nil else { return }
        try check(.createSockets, s)
        let configuration = s.configuration
        var fd4: Int32?
        var fd6: Int32?
        do {
            if configuration.isIPv4Enabled { fd4 = try Self.makeSocket(AF_INET, sendBuffer: configuration.maxSend) }
            if configuration.isIPv6Enabled { fd6 = try Self.makeSocket(AF_INET6, sendBuffer: configuration.maxSend) }
        } catch {
            if let fd4 { _ = UDPSystem.close(fd4) }
            throw error
        }
        s.lives &+= 1
        // Every life on the same loop: a packet an ended life hands back reaches the next one first.
        let loop = s.loop ?? eventLoopGroup.next()
        s.loop = loop
        s.sockets = Sockets(
            life: s.lives,
            fd4: fd4,
            fd6: fd6,
            delivery: configuration.callbackDelivery,
            loop: loop,
            callbacks: UDPLoopCallbacks(loop: loop)
        )
    }

    /// Sockets exist, are bound (wildcard, any port, when nobody bound them) and run on the engine.
    func ensureStarted(_ s: inout State) throws -> UDPLife {
        try createSocketsIfNeeded(&s)
        if s.sockets?.isBound == false {
            try bindSockets(
                &s,
                ipv4: try? SocketAddress(ipAddress: "0.0.0.0", port: 0),
                ipv6: try? SocketAddress(ipAddress: "::", port: 0)
            )
        }
        guard let runtime = s.sockets?.runtime else {
            throw GCDAsyncUdpSocketError(code: .closed, message: "Socket closed")
        }
        return runtime
    }

    private func bindSockets(_ s: inout State, ipv4: SocketAddress?, ipv6: SocketAddress?) throws {
        guard var sockets = s.sockets else { return }
        if ipv4 == nil { closeFamily(&s, .inet) }
        if ipv6 == nil { closeFamily(&s, .inet6) }
        sockets = s.sockets!
        if let fd = sockets.fd4, let ipv4 {
            try Self.bindDescriptor(fd, to: ipv4)
            sockets.local4 = try? SocketAddress(localAddressOf: fd)
        }
        if let fd = sockets.fd6, let ipv6 {
            try Self.bindDescriptor(fd, to: ipv6)
            sockets.local6 = try? SocketAddress(localAddressOf: fd)
        }
        guard sockets.fd4 != nil || sockets.fd6 != nil else {
            throw GCDAsyncUdpSocketError.other("No socket of an enabled family is available")
        }
        sockets.isBound = true
        let runtime = UDPLife(socket: self, life: sockets.life, loop: sockets.loop)
        sockets.runtime = runtime
        s.sockets = sockets
        runtime.adopt(ipv4: sockets.fd4, ipv6: sockets.fd6)
    }

    /// Closes one family's socket (after connect or a multicast join picked the other).
    func closeFamily(_ s: inout State, _ family: NIOBSDSocket.ProtocolFamily) {
        guard var sockets = s.sockets else { return }
        let fd: Int32?
        if family == .inet {
            fd = sockets.fd4
            sockets.fd4 = nil
            sockets.local4 = nil
        } else {
            fd = sockets.fd6
            sockets.fd6 = nil
            sockets.local6 = nil
        }
        s.sockets = sockets
        guard let fd else { return }
        if let runtime = sockets.runtime {
            runtime.closeFamily(family)
        } else {
            _ = UDPSystem.close(fd)
        }
    }

    /// Closes whatever a life holds: the engine's channels, or the raw descriptors it never adopted.
    static func release(_ sockets: Sockets) {
        if let runtime = sockets.runtime {
            runtime.shutdown()
        } else {
            for fd in [sockets.fd4, sockets.fd6].compactMap({ $0 }) { _ = UDPSystem.close(fd) }
        }
    }
}
