import Dispatch
import Foundation
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
    // MARK: options

    /// Turns `SO_REUSEPORT` on or off on every socket (creating them if needed); set it before binding.
    public func enableReusePort(_ flag: Bool) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            for family in [NIOBSDSocket.ProtocolFamily.inet, .inet6] {
                try withOpenDescriptor(s, family) { fd in
                    try Self.setOption(fd, SOL_SOCKET, SO_REUSEPORT, flag ? 1 : 0, function: "setsockopt(SO_REUSEPORT)")
                }
            }
        }
    }

    /// Turns `SO_BROADCAST` on or off on the IPv4 socket (creating sockets if needed); without one, does nothing.
    public func enableBroadcast(_ flag: Bool) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            try withOpenDescriptor(s, .inet) { fd in
                try Self.setOption(fd, SOL_SOCKET, SO_BROADCAST, flag ? 1 : 0, function: "setsockopt(SO_BROADCAST)")
            }
        }
    }

    /// Sends IPv4 multicast through the interface with this IPv4 address (`IP_MULTICAST_IF`).
    public func sendIPv4Multicast(onInterface interface: String) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            guard s.sockets?.fd4 != nil else {
                throw GCDAsyncUdpSocketError.badConfig("IPv4 socket is not available for IPv4 multicast")
            }
            guard let address = try? InterfaceResolver.resolve(interface)?.ipv4 else {
                throw GCDAsyncUdpSocketError.badParam("Unknown interface. Specify an interface with an IPv4 address.")
            }
            var value = Self.inAddr(address)
            try withOpenDescriptor(s, .inet) { fd in
                let size = socklen_t(MemoryLayout<in_addr>.size)
                guard setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &value, size) == 0 else {
                    throw GCDAsyncUdpSocketError.posix(errno, function: "setsockopt(IP_MULTICAST_IF)")
                }
            }
        }
    }

    /// Sends IPv6 multicast through the interface with this name (`IPV6_MULTICAST_IF`).
    public func sendIPv6Multicast(onInterface interface: String) throws {
        try state.withLock { s in
            try createSocketsIfNeeded(&s)
            guard s.sockets?.fd6 != nil else {
                throw GCDAsyncUdpSocketError.badConfig("IPv6 socket is not available for IPv6 multicast")
            }
            let index = if_nametoindex(interface)
            guard index != 0 else {
                throw GCDAsyncUdpSocketError.badParam(
                    "Unknown interface. Specify an interface by name (e.g. \"eth0\")."
                )
            }
            try withOpenDescriptor(s, .inet6) { fd in
                try Self.setOption(fd, Int32(IPPROTO_IPV6), IPV6_MULTICAST_IF, Int32(index), function: "setsockopt")
            }
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

    /// Under the lock: runs `body` with this life's descriptor of `family` (nil when there is none). Once the
    /// descriptor belongs to NIO, through the life's send gate (its duplicate, open while `body` runs): a socket NIO
    /// closed on its own throws `.closed` and never reaches a descriptor number another socket may hold by now.
    @discardableResult
    func withOpenDescriptor<T>(
        _ s: State,
        _ family: NIOBSDSocket.ProtocolFamily,
        _ body: (Int32) throws -> T
    ) throws -> T? {
        guard let sockets = s.sockets, let fd = family == .inet ? sockets.fd4 : sockets.fd6 else { return nil }
        guard let runtime = sockets.runtime else { return try body(fd) }
        guard let result = try runtime.withDescriptor(family, body) else {
            throw GCDAsyncUdpSocketError(code: .closed, message: "Socket closed")
        }
        return result
    }

    private func changeMembership(_ group: String, interface: String?, join: Bool) throws {
        try state.withLock { s in
            try check(.changeMembership(join: join), s)
            // Bound (checked): the sockets exist.
            guard let sockets = s.sockets else { return }
            guard let groupAddress = try? SocketAddress(ipAddress: group, port: 0) else {
                throw GCDAsyncUdpSocketError.badParam("Unknown group. Specify valid group IP address.")
            }
            var interfaceIPv4: SocketAddress?
            var interfaceIndex: UInt32 = 0
            if let interface {
                interfaceIPv4 = try? InterfaceResolver.resolve(interface)?.ipv4
                interfaceIndex = Self.interfaceIndex(interface)
                if interfaceIPv4 == nil && interfaceIndex == 0 {
                    throw GCDAsyncUdpSocketError.badParam(
                        "Unknown interface. Specify valid interface by name (e.g. \"en1\") or IP address."
                    )
                }
            }
            if groupAddress.protocol == .inet, sockets.fd4 != nil, interface == nil || interfaceIPv4 != nil {
                try withOpenDescriptor(s, .inet) { fd in
                    try Self.setMembership(
                        fd,
                        group: groupAddress,
                        interfaceIPv4: interfaceIPv4,
                        interfaceIndex: 0,
                        join: join
                    )
                }
                closeFamily(&s, .inet6)
            } else if groupAddress.protocol == .inet6, sockets.fd6 != nil, interface == nil || interfaceIndex != 0 {
                try withOpenDescriptor(s, .inet6) { fd in
                    try Self.setMembership(
                        fd,
                        group: groupAddress,
                        interfaceIPv4: nil,
                        interfaceIndex: interfaceIndex,
                        join: join
                    )
                }
                closeFamily(&s, .inet)
            } else {
                throw GCDAsyncUdpSocketError.badParam("Socket, group, and interface do not have matching IP versions")
            }
        }
    }
}
