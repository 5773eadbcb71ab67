import Dispatch
public import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension AsyncUdpSocket {
    // MARK: binding and connecting

    /// Binds every enabled family to `port` on all interfaces (0 = each family picks a free port).
    /// - Throws: ``AsyncUdpSocketError``: `.badConfig` (bound already, connected, no delegate, both families off) or
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
            throw AsyncUdpSocketError.wrapping(error, function: "bind")
        }
        let ipv4 = resolved.map { $0.ipv4 } ?? (try? SocketAddress(ipAddress: "0.0.0.0", port: Int(port)))
        let ipv6 = resolved.map { $0.ipv6 } ?? (try? SocketAddress(ipAddress: "::", port: Int(port)))
        try bind(ipv4: ipv4, ipv6: ipv6)
    }

    /// Binds to a `sockaddr_in`/`sockaddr_in6`; the other family's socket is closed.
    /// - Throws: as ``bind(toPort:)``, plus `.badParam` for malformed bytes.
    public func bind(toAddress localAddr: Data) throws {
        guard let address = SocketAddress(sockaddrData: localAddr) else {
            throw AsyncUdpSocketError.badParam("A valid IPv4 or IPv6 address was not given")
        }
        try bind(
            ipv4: address.protocol == .inet ? address : nil,
            ipv6: address.protocol == .inet6 ? address : nil
        )
    }

    private func bind(ipv4: SocketAddress?, ipv6: SocketAddress?) throws {
        try state.withLock { s in
            try checkDelegate(s)
            guard s.configuration.isIPv4Enabled || s.configuration.isIPv6Enabled else {
                throw AsyncUdpSocketError.badConfig(
                    "Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first."
                )
            }
            if let sockets = s.sockets {
                if sockets.isBound { throw AsyncUdpSocketError.badConfig("Cannot bind a socket more than once.") }
                if sockets.isConnecting || sockets.connectedAddress != nil {
                    throw AsyncUdpSocketError.badConfig(
                        "Cannot bind after connecting. If needed, bind first, then connect."
                    )
                }
            }
            let useIPv4 = s.configuration.isIPv4Enabled ? ipv4 : nil
            let useIPv6 = s.configuration.isIPv6Enabled ? ipv6 : nil
            guard useIPv4 != nil || useIPv6 != nil else {
                throw AsyncUdpSocketError.badParam(
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
        guard !host.isEmpty else { throw AsyncUdpSocketError.badParam("Invalid host parameter (empty)") }
        let runtime = try startConnect()
        let future = HostResolver.resolve(host: host, port: Int(port), on: runtime.loop)
        runtime.enqueue(.connect(future))
    }

    /// Connects to `sockaddr` bytes.
    /// - Throws: as ``connect(toHost:onPort:)``, `.badParam` for malformed bytes.
    public func connect(toAddress remoteAddr: Data) throws {
        guard let address = SocketAddress(sockaddrData: remoteAddr) else {
            throw AsyncUdpSocketError.badParam("A valid IPv4 or IPv6 address was not given")
        }
        let runtime = try startConnect()
        runtime.enqueue(.connect(runtime.loop.makeSucceededFuture([address])))
    }

    private func startConnect() throws -> UDPLife {
        try state.withLock { s in
            try checkDelegate(s)
            if let sockets = s.sockets, sockets.isConnecting || sockets.connectedAddress != nil {
                throw AsyncUdpSocketError.badConfig("Cannot connect a socket more than once.")
            }
            let runtime = try ensureStarted(&s)
            s.sockets?.isConnecting = true
            return runtime
        }
    }

    // MARK: options

    /// Turns `SO_REUSEPORT` on or off on every socket (creating them if needed); set it before binding.
    public func enableReusePort(_ flag: Bool) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            for fd in [s.sockets?.fd4, s.sockets?.fd6].compactMap({ $0 }) {
                try Self.setOption(fd, SOL_SOCKET, SO_REUSEPORT, flag ? 1 : 0, function: "setsockopt(SO_REUSEPORT)")
            }
        }
    }

    /// Turns `SO_BROADCAST` on or off on the IPv4 socket (creating sockets if needed); without one, does nothing.
    public func enableBroadcast(_ flag: Bool) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            guard let fd = s.sockets?.fd4 else { return }
            try Self.setOption(fd, SOL_SOCKET, SO_BROADCAST, flag ? 1 : 0, function: "setsockopt(SO_BROADCAST)")
        }
    }

    /// Sends IPv4 multicast through the interface with this IPv4 address (`IP_MULTICAST_IF`).
    public func sendIPv4Multicast(onInterface interface: String) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            guard let fd = s.sockets?.fd4 else {
                throw AsyncUdpSocketError.badConfig("IPv4 socket is not available for IPv4 multicast")
            }
            guard let address = try? InterfaceResolver.resolve(interface)?.ipv4 else {
                throw AsyncUdpSocketError.badParam("Unknown interface. Specify an interface with an IPv4 address.")
            }
            var value = Self.inAddr(address)
            guard setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &value, socklen_t(MemoryLayout<in_addr>.size)) == 0
            else { throw AsyncUdpSocketError.posix(errno, function: "setsockopt(IP_MULTICAST_IF)") }
        }
    }

    /// Sends IPv6 multicast through the interface with this name (`IPV6_MULTICAST_IF`).
    public func sendIPv6Multicast(onInterface interface: String) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            guard let fd = s.sockets?.fd6 else {
                throw AsyncUdpSocketError.badConfig("IPv6 socket is not available for IPv6 multicast")
            }
            let index = if_nametoindex(interface)
            guard index != 0 else {
                throw AsyncUdpSocketError.badParam("Unknown interface. Specify an interface by name (e.g. \"eth0\").")
            }
            try Self.setOption(fd, Int32(IPPROTO_IPV6), IPV6_MULTICAST_IF, Int32(index), function: "setsockopt")
        }
    }

    /// Joins a multicast group (a numeric address) on any interface.
    public func joinMulticastGroup(_ group: String) throws {
        try joinMulticastGroup(group, onInterface: nil)
    }

    /// Joins a multicast group on `interface` (a name or one of its addresses; nil = any). Joining an IPv4 group
    /// closes the IPv6 socket, and vice versa.
    /// - Throws: `.badConfig` before bind or while connected, `.badParam` for a bad group or interface or a family
    ///   mismatch, the POSIX error of the join.
    public func joinMulticastGroup(_ group: String, onInterface interface: String?) throws {
        try changeMembership(group, interface: interface, join: true)
    }

    /// Leaves a multicast group on any interface.
    public func leaveMulticastGroup(_ group: String) throws {
        try leaveMulticastGroup(group, onInterface: nil)
    }

    /// Leaves a multicast group joined on `interface`.
    public func leaveMulticastGroup(_ group: String, onInterface interface: String?) throws {
        try changeMembership(group, interface: interface, join: false)
    }

    private func changeMembership(_ group: String, interface: String?, join: Bool) throws {
        let verb = join ? "join" : "leave"
        try state.withLock { s in
            guard let sockets = s.sockets, sockets.isBound else {
                throw AsyncUdpSocketError.badConfig("Must bind a socket before \(verb)ing a multicast group.")
            }
            guard !sockets.isConnecting, sockets.connectedAddress == nil else {
                throw AsyncUdpSocketError.badConfig("Cannot \(verb) a multicast group if connected.")
            }
            guard let groupAddress = try? SocketAddress(ipAddress: group, port: 0) else {
                throw AsyncUdpSocketError.badParam("Unknown group. Specify valid group IP address.")
            }
            var interfaceIPv4: SocketAddress?
            var interfaceIndex: UInt32 = 0
            if let interface {
                interfaceIPv4 = try? InterfaceResolver.resolve(interface)?.ipv4
                interfaceIndex = Self.interfaceIndex(interface)
                if interfaceIPv4 == nil && interfaceIndex == 0 {
                    throw AsyncUdpSocketError.badParam(
                        "Unknown interface. Specify valid interface by name (e.g. \"en1\") or IP address."
                    )
                }
            }
            if groupAddress.protocol == .inet, let fd = sockets.fd4, interface == nil || interfaceIPv4 != nil {
                try Self.setMembership(
                    fd,
                    group: groupAddress,
                    interfaceIPv4: interfaceIPv4,
                    interfaceIndex: 0,
                    join: join
                )
                closeFamily(&s, .inet6)
            } else if groupAddress.protocol == .inet6, let fd = sockets.fd6, interface == nil || interfaceIndex != 0 {
                try Self.setMembership(
                    fd,
                    group: groupAddress,
                    interfaceIPv4: nil,
                    interfaceIndex: interfaceIndex,
                    join: join
                )
                closeFamily(&s, .inet)
            } else {
                throw AsyncUdpSocketError.badParam("Socket, group, and interface do not have matching IP versions")
            }
        }
    }

    // MARK: closing

    /// Closes at once: queued sends are dropped without callbacks; `udpSocketDidClose(nil)` follows if sockets
    /// existed. The socket can be used again (new sockets on next use).
    public func close() {
        let sockets: Sockets? = state.withLock { s in
            guard let sockets = s.sockets else { return nil }
            enqueueDidClose(&s, error: nil)
            s.sockets = nil
            return sockets
        }
        if let sockets { Self.release(sockets) }
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

    func checkDelegate(_ s: State) throws {
        guard s.delegate != nil else {
            throw AsyncUdpSocketError.badConfig("Attempting to use socket without a delegate. Set a delegate first.")
        }
        guard s.delegateQueue != nil else {
            throw AsyncUdpSocketError.badConfig(
                "Attempting to use socket without a delegate queue. Set a delegate queue first."
            )
        }
    }

    func createSocketsIfNeeded(_ s: inout State) throws {
        guard s.sockets == nil else { return }
        try checkDelegate(s)
        let configuration = s.configuration
        guard configuration.isIPv4Enabled || configuration.isIPv6Enabled else {
            throw AsyncUdpSocketError.badConfig(
                "Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first."
            )
        }
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
        s.sockets = Sockets(life: s.lives, fd4: fd4, fd6: fd6)
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
            throw AsyncUdpSocketError(code: .closed, message: "Socket closed")
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
            throw AsyncUdpSocketError.other("No socket of an enabled family is available")
        }
        sockets.isBound = true
        let runtime = UDPLife(socket: self, life: sockets.life, loop: eventLoopGroup.next())
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

    static func makeSocket(_ family: Int32, sendBuffer: UInt16, ipv6Only: Bool = true) throws -> Int32 {
        #if canImport(Glibc) || canImport(Musl)
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { throw AsyncUdpSocketError.posix(errno, function: "socket") }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, function: "setsockopt(SO_REUSEADDR)")
            if sendBuffer > 0 {
                try setOption(fd, SOL_SOCKET, SO_SNDBUF, Int32(sendBuffer), function: "setsockopt(SO_SNDBUF)")
            }
            #if os(Linux)
            // Linux delivers a group's datagrams to every wildcard-bound socket on the port once any socket joined
            // it (IP_MULTICAST_ALL); off, a socket receives only the groups it joined, as on Darwin and in the
            // original. (Both values are Linux-only constants; an older kernel without the IPv6 one is tolerated.)
            if family == AF_INET {
                try setOption(fd, Int32(IPPROTO_IP), 49, 0, function: "setsockopt(IP_MULTICAST_ALL)")
            } else {
                try? setOption(fd, Int32(IPPROTO_IPV6), 29, 0, function: "setsockopt(IPV6_MULTICAST_ALL)")
            }
            #endif
            if family == AF_INET6, ipv6Only {
                // Linux: a separate IPv4 socket exists, so IPv4 senders never show up as ::ffff: addresses.
                try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1, function: "setsockopt(IPV6_V6ONLY)")
            }
        } catch {
            _ = UDPSystem.close(fd)
            throw error
        }
        return fd
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, function: String) throws {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw AsyncUdpSocketError.posix(errno, function: function)
        }
    }

    static func bindDescriptor(_ fd: Int32, to address: SocketAddress) throws {
        let result = address.withSockAddr { pointer, length in UDPSystem.bind(fd, pointer, socklen_t(length)) }
        guard result == 0 else { throw AsyncUdpSocketError.posix(errno, function: "bind") }
    }

    static func inAddr(_ address: SocketAddress) -> in_addr {
        guard case .v4(let v4) = address else { return in_addr() }
        return v4.address.sin_addr
    }

    /// Joins or leaves `group` on a descriptor of the group's family: IPv4 by interface address (nil = any), IPv6 by
    /// interface index (0 = any). Plain setsockopt, so that loopback (no MULTICAST flag) can take part too.
    static func setMembership(
        _ fd: Int32,
        group: SocketAddress,
        interfaceIPv4: SocketAddress?,
        interfaceIndex: UInt32,
        join: Bool
    ) throws {
        let verb = join ? "join" : "leave"
        switch group {
        case .v4:
            var request = ip_mreq()
            request.imr_multiaddr = inAddr(group)
            request.imr_interface.s_addr = interfaceIPv4.map { inAddr($0).s_addr } ?? INADDR_ANY
            let option = join ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP
            guard setsockopt(fd, Int32(IPPROTO_IP), option, &request, socklen_t(MemoryLayout<ip_mreq>.size)) == 0
            else { throw AsyncUdpSocketError.posix(errno, function: "setsockopt(\(verb))") }
        case .v6(let v6):
            var request = ipv6_mreq()
            request.ipv6mr_multiaddr = v6.address.sin6_addr
            request.ipv6mr_interface = interfaceIndex
            #if canImport(Darwin)
            let option = join ? IPV6_JOIN_GROUP : IPV6_LEAVE_GROUP
            #else
            let option = join ? IPV6_ADD_MEMBERSHIP : IPV6_DROP_MEMBERSHIP
            #endif
            guard setsockopt(fd, Int32(IPPROTO_IPV6), option, &request, socklen_t(MemoryLayout<ipv6_mreq>.size)) == 0
            else { throw AsyncUdpSocketError.posix(errno, function: "setsockopt(\(verb))") }
        default:
            throw AsyncUdpSocketError.badParam("Unknown group. Specify valid group IP address.")
        }
    }

    static func interfaceIndex(_ interface: String) -> UInt32 {
        let byName = if_nametoindex(interface)
        if byName != 0 { return byName }
        let devices = (try? System.enumerateDevices()) ?? []
        let match = devices.first { $0.address?.ipAddress == interface }
        return match.map { UInt32($0.interfaceIndex) } ?? 0
    }
}

/// System calls whose names the socket's own methods shadow.
enum UDPSystem {
    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #elseif canImport(Musl)
        Musl.close(fd)
        #else
        Darwin.close(fd)
        #endif
    }

    static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.bind(fd, address, length)
        #elseif canImport(Musl)
        Musl.bind(fd, address, length)
        #else
        Darwin.bind(fd, address, length)
        #endif
    }
}
