import Foundation
import NIOCore

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SocketAddress {
    /// The raw `sockaddr_in` / `sockaddr_in6` / `sockaddr_un` bytes, as the original's `NSData` addresses.
    var sockaddrData: Data {
        withSockAddr { pointer, length in
            Data(bytes: pointer, count: Int(length))
        }
    }

    /// Parses `sockaddr_in` or `sockaddr_in6` bytes of exactly the right length; nil for anything else.
    init?(sockaddrData data: Data) {
        if data.count == MemoryLayout<sockaddr_in>.size {
            var address = sockaddr_in()
            _ = withUnsafeMutableBytes(of: &address) { data.copyBytes(to: $0) }
            guard Int32(address.sin_family) == AF_INET else { return nil }
            self = SocketAddress(address, host: "")
        } else if data.count == MemoryLayout<sockaddr_in6>.size {
            var address = sockaddr_in6()
            _ = withUnsafeMutableBytes(of: &address) { data.copyBytes(to: $0) }
            guard Int32(address.sin6_family) == AF_INET6 else { return nil }
            self = SocketAddress(address, host: "")
        } else {
            return nil
        }
    }

    /// The numeric host, without brackets, with IPv4-mapped IPv6 addresses shown as IPv4.
    var numericHost: String? {
        guard var text = ipAddress else { return nil }
        if text.hasPrefix("::ffff:"), text.contains(".") {
            text.removeFirst(7)
        }
        return text
    }
}

extension SocketAddress {
    /// The local address of a socket descriptor (getsockname).
    init(localAddressOf fd: Int32) throws {
        self = try Self.query(fd, getsockname)
    }

    /// The peer address of a connected socket descriptor (getpeername).
    init(peerAddressOf fd: Int32) throws {
        self = try Self.query(fd, getpeername)
    }

    private static func query(
        _ fd: Int32,
        _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) throws -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
        }
        guard status == 0 else { throw GCDAsyncSocketError.posix(errno, function: "getsockname") }
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
            }
            return SocketAddress(address, host: "")
        case AF_INET6:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
            }
            return SocketAddress(address, host: "")
        default:
            let path = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { pointer in
                    withUnsafePointer(to: pointer.pointee.sun_path) {
                        $0.withMemoryRebound(to: CChar.self, capacity: 108) { String(cString: $0) }
                    }
                }
            }
            return try SocketAddress(unixDomainSocketPath: path)
        }
    }
}
