public import Foundation
import NIOCore
import TetherConcurrency
import TetherResolver

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension AsyncUdpSocket {
    // MARK: binding and connecting

    /// Binds to `port` on every interface (0: a free port for each family). Equivalent to
    /// `bind(toAddress: nil, port: port)`.
    /// - Throws: as ``bind(toAddress:port:)``.
    public func bind(toPort port: UInt16) throws {
        try bind(toAddress: nil, port: port)
    }

    /// Binds to `localAddr`, synchronously: nil or "" for every interface, "localhost"/"loopback" for the loopback
    /// addresses, else a numeric address or a name resolved now (its first IPv4 and first IPv6 address). An address of
    /// one family closes the socket of the other.
    /// - Parameters:
    ///   - localAddr: the local address, or nil.
    ///   - port: the local port; 0 for a free one (each family picks its own).
    /// - Throws: ``AsyncSocketException`` "The socket is closed.", "Cannot bind a socket more than once." (bound
    ///   before, including by a send) or "Cannot bind after connecting. If needed, bind first, then connect.";
    ///   an `NSError` in `"kCFStreamErrorDomainNetDB"` with the `EAI_*` code when the name does not resolve;
    ///   ``AsyncUdpSocketError`` ``AsyncUdpSocketError/Code/ipv4Unavailable``/``AsyncUdpSocketError/Code/ipv6Unavailable``
    ///   when the address's family is not the socket's, ``AsyncUdpSocketError/Code/cfSocketError`` (−1) when `bind`
    ///   fails (its `POSIXError` in ``AsyncUdpSocketError/underlying``).
    public func bind(toAddress localAddr: String?, port: UInt16) throws {
        try state.withLock { s in
            if s.isClosed { throw AsyncSocketException(reason: "The socket is closed.") }
            if s.didBind { throw AsyncSocketException(reason: "Cannot bind a socket more than once.") }
            if s.didConnect {
                throw AsyncSocketException(reason: "Cannot bind after connecting. If needed, bind first, then connect.")
            }
        }
        let (v4, v6) = try Self.localAddresses(localAddr, port: Int(port))
        let use4 = core.isIPv4() ? v4 : nil
        let use6 = core.isIPv6() ? v6 : nil
        guard use4 != nil || use6 != nil else {
            throw AsyncUdpSocketError(v4 != nil ? .ipv4Unavailable : .ipv6Unavailable)
        }
        do {
            try core.bind(ipv4: use4, ipv6: use6)
        } catch {
            throw AsyncUdpSocketError(.cfSocketError, underlying: AsyncUdpSocketBridge.systemError(error))
        }
        state.withLock { $0.didBind = true }
        driveReceives()
    }

    /// Connects to `host` on `port`, synchronously: the name is resolved now and IPv4 is preferred; the socket of
    /// the other family is closed. No callback follows. After it, only datagrams from that peer are received.
    /// - Throws: ``AsyncSocketException`` "The socket is closed." or "Cannot connect a socket more than once." (also
    ///   while another thread's connect waits for its answer); an `NSError` in `"kCFStreamErrorDomainNetDB"` with the `EAI_*` code (`EAI_NONAME` for an empty host);
    ///   ``AsyncUdpSocketError`` `.ipv4Unavailable`/`.ipv6Unavailable` when no address has a family the socket has,
    ///   `.cfSocketError` when the system refuses the connect.
    public func connect(toHost host: String, onPort port: UInt16) throws {
        try checkConnect()
        let addresses = try Self.resolve(host, port: Int(port))
        let v4 = addresses.first { $0.protocol == .inet }
        let v6 = addresses.first { $0.protocol == .inet6 }
        if core.isIPv4(), let v4 {
            try connect(to: v4)
        } else if core.isIPv6(), let v6 {
            try connect(to: v6)
        } else {
            throw AsyncUdpSocketError(v4 != nil ? .ipv4Unavailable : .ipv6Unavailable)
        }
    }

    /// Connects to `sockaddr` bytes (a 16-byte `sockaddr_in` or a 28-byte `sockaddr_in6`), synchronously.
    /// - Throws: as ``connect(toHost:onPort:)``; ``AsyncUdpSocketError`` `.badParameter` ("remoteAddr parameter is not
    ///   a valid address") for bytes of another length or family.
    public func connect(toAddress remoteAddr: Data) throws {
        try checkConnect()
        guard let address = Self.address(remoteAddr) else { throw AsyncUdpSocketError(.badParameter) }
        if address.protocol == .inet, !core.isIPv4() { throw AsyncUdpSocketError(.ipv4Unavailable) }
        if address.protocol == .inet6, !core.isIPv6() { throw AsyncUdpSocketError(.ipv6Unavailable) }
        try connect(to: address)
    }

    private func checkConnect() throws {
        try state.withLock { s in
            if s.isClosed { throw AsyncSocketException(reason: "The socket is closed.") }
            if s.didConnect { throw AsyncSocketException(reason: "Cannot connect a socket more than once.") }
        }
    }

    /// The core connects asynchronously; the caller's thread waits for its answer (the original's connect was a
    /// system call on the caller's thread).
    private func connect(to address: SocketAddress) throws {
        try state.withLock { s in
            if s.isClosed { throw AsyncSocketException(reason: "The socket is closed.") }
            if s.didConnect || s.isConnecting {
                throw AsyncSocketException(reason: "Cannot connect a socket more than once.")
            }
            s.isConnecting = true
        }
        defer { state.withLock { $0.isConnecting = false } }
        let waiter = AsyncUdpSocketBridge.ConnectWaiter()
        bridge.expectConnect(waiter)
        do {
            try core.connect(toAddress: address.sockaddrData)
        } catch {
            throw AsyncUdpSocketError(.cfSocketError, underlying: AsyncUdpSocketBridge.systemError(error))
        }
        try waiter.wait()
        state.withLock { $0.didConnect = true }
        driveReceives()
    }

    // MARK: multicast and broadcast

    /// Joins the multicast group `group` on any interface. Equivalent to `joinMulticastGroup(group, withAddress: nil)`.
    /// - Throws: as ``joinMulticastGroup(_:withAddress:)``.
    public func joinMulticastGroup(_ group: String) throws {
        try joinMulticastGroup(group, withAddress: nil)
    }

    /// Joins the multicast group `group` on the interface with the local address `interface` (nil: any). Joining an
    /// IPv4 group closes the IPv6 socket, and vice versa. An IPv6 group is joined on interface index 0, as the
    /// original.
    /// - Throws: ``AsyncSocketException`` "The socket is closed.", "Must bind a socket before joining a multicast
    ///   group." or "Cannot join a multicast group if connected."; an `NSError` in `"kCFStreamErrorDomainNetDB"`
    ///   ("Invalid parameter 'group': …" / "… 'address': …") when a name does not resolve; ``AsyncUdpSocketError``
    ///   `.badParameter` ("Invalid group and/or address, not matching existing socket(s)"); the system's refusal
    ///   as an `NSError` in `NSPOSIXErrorDomain` with the errno (Δ: the original reported −1 in
    ///   `"kCFStreamErrorDomainPOSIX"`), described as "Unable to join IPv4 multicast group" (or IPv6).
    public func joinMulticastGroup(_ group: String, withAddress interface: String?) throws {
        try state.withLock { s in
            if s.isClosed { throw AsyncSocketException(reason: "The socket is closed.") }
            if !s.didBind { throw AsyncSocketException(reason: "Must bind a socket before joining a multicast group.") }
            if s.didConnect { throw AsyncSocketException(reason: "Cannot join a multicast group if connected.") }
        }
        let groups = try Self.resolve(group, port: 0, prefix: "Invalid parameter 'group': ")
        let local: (SocketAddress?, SocketAddress?)? =
            try interface.map { try Self.localAddresses($0, port: 0, prefix: "Invalid parameter 'address': ") }
        let mismatch = AsyncUdpSocketError(
            .badParameter,
            message: "Invalid group and/or address, not matching existing socket(s)"
        )
        if let group4 = groups.first(where: { $0.protocol == .inet }), core.isIPv4(), local == nil || local?.0 != nil {
            try join(group4, interface: local?.0?.ipAddress, description: "Unable to join IPv4 multicast group")
        } else if let group6 = groups.first(where: { $0.protocol == .inet6 }), core.isIPv6(),
            local == nil || local?.1 != nil
        {
            try join(group6, interface: nil, description: "Unable to join IPv6 multicast group")
        } else {
            throw mismatch
        }
    }

    private func join(_ group: SocketAddress, interface: String?, description: String) throws {
        do {
            try core.joinMulticastGroup(group.ipAddress ?? "", onInterface: interface)
        } catch let error as GCDAsyncUdpSocketError where error.posixErrorCode != nil {
            throw NSError(
                domain: NSPOSIXErrorDomain,
                code: Int(error.posixErrorCode?.rawValue ?? 0),
                userInfo: [NSLocalizedDescriptionKey: description, NSUnderlyingErrorKey: error as NSError]
            )
        } catch {
            throw AsyncUdpSocketError(
                .badParameter,
                message: "Invalid group and/or address, not matching existing socket(s)",
                underlying: error
            )
        }
    }

    /// Turns `SO_BROADCAST` on or off on the IPv4 socket; without one (or on a closed socket) it does nothing.
    /// - Throws: the system's refusal as an `NSError` in `NSPOSIXErrorDomain` with the errno (Δ: the original
    ///   reported −1 in `"kCFStreamErrorDomainPOSIX"`), described as "Unable to enable broadcast message sending".
    public func enableBroadcast(_ flag: Bool) throws {
        guard !isClosed(), core.isIPv4() else { return }
        do {
            try core.enableBroadcast(flag)
        } catch {
            let errno = (AsyncUdpSocketBridge.systemError(error) as? POSIXError)?.code.rawValue ?? EINVAL
            throw NSError(
                domain: NSPOSIXErrorDomain,
                code: Int(errno),
                userInfo: [NSLocalizedDescriptionKey: "Unable to enable broadcast message sending"]
            )
        }
    }

    // MARK: resolution (synchronous, on the caller's thread, as the original)

    /// Every address of `host` (numeric, "localhost"/"loopback", or a name looked up now).
    /// - Throws: an `NSError` in `"kCFStreamErrorDomainNetDB"` with the `EAI_*` code (`EAI_NONAME` for "").
    static func resolve(_ host: String, port: Int, prefix: String = "") throws -> [SocketAddress] {
        guard !host.isEmpty else { throw netDBError(EAI_NONAME, prefix: prefix) }
        if let literal = HostResolver.literalAddresses(host: host, port: port) { return literal }
        do {
            return try NameResolver.lookup(host: host, port: port)
        } catch {
            throw netDBError(error.code, prefix: prefix)
        }
    }

    /// The local addresses a bind (or a join's interface) means: any, loopback, or the first of each family.
    static func localAddresses(
        _ host: String?,
        port: Int,
        prefix: String = ""
    ) throws -> (SocketAddress?, SocketAddress?) {
        guard let host, !host.isEmpty else {
            return (
                try? SocketAddress(ipAddress: "0.0.0.0", port: port), try? SocketAddress(ipAddress: "::", port: port)
            )
        }
        let addresses = try resolve(host, port: port, prefix: prefix)
        return (addresses.first { $0.protocol == .inet }, addresses.first { $0.protocol == .inet6 })
    }

    static func netDBError(_ code: Int32, prefix: String) -> NSError {
        NSError(
            domain: "kCFStreamErrorDomainNetDB",
            code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: prefix + String(cString: gai_strerror(code))]
        )
    }
}
