#if os(Linux)
import CTetherNetlink
import Glibc

/// A non-blocking `NETLINK_ROUTE` socket subscribed to link, IPv4/IPv6 address, route and rule changes.
final class NetlinkSocket {
    /// What one receive produced.
    enum Received {
        /// The kernel's messages in one datagram (messages from other senders are dropped).
        case messages([NetlinkMessage])
        /// Nothing to read now.
        case wouldBlock
        /// The socket's buffer overflowed (`ENOBUFS`): events were lost, the state must be dumped again.
        case overrun
    }

    /// The multicast groups: RTMGRP_LINK, RTMGRP_IPV4_IFADDR, RTMGRP_IPV4_ROUTE, RTMGRP_IPV4_RULE,
    /// RTMGRP_IPV6_IFADDR, RTMGRP_IPV6_ROUTE, and the IPv6 rules group (RTNLGRP_IPV6_RULE, which has no RTMGRP_ mask).
    static let groups =
        UInt32(
            RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV4_RULE | RTMGRP_IPV6_IFADDR
                | RTMGRP_IPV6_ROUTE
        ) | UInt32(1) << (UInt32(RTNLGRP_IPV6_RULE.rawValue) - 1)

    let fileDescriptor: Int32
    /// The port the kernel assigned to this socket; replies to its requests carry it.
    let portID: UInt32
    private let buffer: UnsafeMutableRawBufferPointer

    /// Opens, sizes and binds the socket.
    /// - Throws: `NetworkReachabilityError.Code.backendUnavailable` with the errno when the kernel refuses.
    init() throws {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        guard descriptor >= 0 else {
            throw NetworkReachabilityError.posix(.backendUnavailable, "netlink socket() failed", errno: errno)
        }
        // A generous buffer makes overruns rare; they are still handled by a re-dump.
        var size: Int32 = 1 << 20
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = Self.groups
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let number = errno
            close(descriptor)
            throw NetworkReachabilityError.posix(.backendUnavailable, "netlink bind() failed", errno: number)
        }
        var assigned = sockaddr_nl()
        var assignedLength = socklen_t(MemoryLayout<sockaddr_nl>.size)
        _ = withUnsafeMutablePointer(to: &assigned) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &assignedLength) }
        }
        fileDescriptor = descriptor
        portID = assigned.nl_pid
        buffer = .allocate(byteCount: 64 * 1024, alignment: 8)
    }

    deinit {
        close(fileDescriptor)
        buffer.deallocate()
    }

    /// Sends one request to the kernel.
    /// - Throws: `NetworkReachabilityError.Code.backendFailed` with the errno.
    func send(_ message: NetlinkMessage) throws {
        var kernel = sockaddr_nl()
        kernel.nl_family = sa_family_t(AF_NETLINK)
        let bytes = message.encoded()
        let sent = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &kernel) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fileDescriptor, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
        }
        guard sent == bytes.count else {
            throw NetworkReachabilityError.posix(.backendFailed, "netlink send failed", errno: sent < 0 ? errno : EIO)
        }
    }

    /// Receives one datagram without blocking.
    /// - Throws: `NetworkReachabilityError.Code.backendFailed` with the errno for errors other than `EAGAIN`,
    ///   `EINTR` and `ENOBUFS`.
    func receive() throws -> Received {
        var sender = sockaddr_nl()
        var senderLength = socklen_t(MemoryLayout<sockaddr_nl>.size)
        while true {
            let count = withUnsafeMutablePointer(to: &sender) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fileDescriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), $0, &senderLength)
                }
            }
            if count >= 0 {
                // Only the kernel (port 0) speaks for the routing state.
                guard sender.nl_pid == 0 else { return .messages([]) }
                return .messages(NetlinkMessage.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count])))
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ENOBUFS: return .overrun
            case let number:
                throw NetworkReachabilityError.posix(.backendFailed, "netlink receive failed", errno: number)
            }
        }
    }
}
#endif
