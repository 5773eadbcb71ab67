#if os(Linux)
import Glibc

/// Resolves a host name with `getaddrinfo` (blocking: only ever called on the monitor's own thread or inside
/// `startMonitoring`, never on an event loop).
enum HostResolver {
    /// The IPv4 and IPv6 addresses of `host`, in the resolver's order, without duplicates; empty when it does not
    /// resolve.
    static func addresses(of host: String) -> [IPAddressBytes] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [IPAddressBytes] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr, let bytes = Self.bytes(of: address), !result.contains(bytes) {
                result.append(bytes)
            }
            entry = current.pointee.ai_next
        }
        return result
    }

    private static func bytes(of address: UnsafeMutablePointer<sockaddr>) -> IPAddressBytes? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                var raw = $0.pointee.sin_addr
                return IPAddressBytes(family: .ipv4, bytes: withUnsafeBytes(of: &raw) { Array($0) })
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                var raw = $0.pointee.sin6_addr
                return IPAddressBytes(family: .ipv6, bytes: withUnsafeBytes(of: &raw) { Array($0) })
            }
        default:
            return nil
        }
    }
}
#endif
