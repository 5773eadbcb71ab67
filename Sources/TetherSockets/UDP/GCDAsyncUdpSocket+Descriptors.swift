import Dispatch
import Foundation
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

/// Plain system calls on datagram descriptors, shared by both faces (synchronous, so errors throw at the call).
extension GCDAsyncUdpSocket {
    static func makeSocket(_ family: Int32, sendBuffer: UInt16, ipv6Only: Bool = true) throws -> Int32 {
        #if canImport(Glibc) || canImport(Musl)
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { throw GCDAsyncUdpSocketError.posix(errno, function: "socket") }
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
            throw GCDAsyncUdpSocketError.posix(errno, function: function)
        }
    }

    /// Binds `fd` to `address`. For any port (0), `SO_REUSEADDR` is off during the bind: Linux would otherwise pick
    /// a port that another socket with `SO_REUSEADDR` holds, and the two would share it (one of them receiving the
    /// other's datagrams). It is on again afterwards, as the original keeps it.
    static func bindDescriptor(_ fd: Int32, to address: SocketAddress) throws {
        #if os(Linux)
        let anyPort = address.port == 0
        if anyPort { try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 0, function: "setsockopt(SO_REUSEADDR)") }
        #endif
        let result = address.withSockAddr { pointer, length in UDPSystem.bind(fd, pointer, socklen_t(length)) }
        let code = errno
        #if os(Linux)
        if anyPort { try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, function: "setsockopt(SO_REUSEADDR)") }
        #endif
        guard result == 0 else { throw GCDAsyncUdpSocketError.posix(code, function: "bind") }
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
            else { throw GCDAsyncUdpSocketError.posix(errno, function: "setsockopt(\(verb))") }
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
            else { throw GCDAsyncUdpSocketError.posix(errno, function: "setsockopt(\(verb))") }
        default:
            throw GCDAsyncUdpSocketError.badParam("Unknown group. Specify valid group IP address.")
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
