import Dispatch
import NIOCore

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Name resolution for both faces: numeric literals and `localhost`/`loopback` without DNS, everything else through
/// getaddrinfo on a dispatch queue, never on an event loop.
enum HostResolver {
    /// Addresses for `host` known without a lookup, or nil when a lookup is needed.
    static func literalAddresses(host: String, port: Int) -> [SocketAddress]? {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "loopback" {
            return [
                try! SocketAddress(ipAddress: "127.0.0.1", port: port),
                try! SocketAddress(ipAddress: "::1", port: port),
            ]
        }
        var literal = host
        if literal.hasPrefix("[") && literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        if let address = try? SocketAddress(ipAddress: literal, port: port) {
            return [address]
        }
        return nil
    }

    /// Whether `host` is an IP literal (a connection to it is not "by name").
    static func isIPLiteral(_ host: String) -> Bool {
        var literal = host
        if literal.hasPrefix("[") && literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        return (try? SocketAddress(ipAddress: literal, port: 0)) != nil
    }

    /// Resolves off the event loop; the future completes on `eventLoop`.
    static func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        if let addresses = literalAddresses(host: host, port: port) {
            return eventLoop.makeSucceededFuture(addresses)
        }
        let promise = eventLoop.makePromise(of: [SocketAddress].self)
        DispatchQueue.global().async {
            promise.completeWith(Result { try lookup(host: host, port: port) })
        }
        return promise.futureResult
    }

    /// Blocking getaddrinfo (AF_UNSPEC, SOCK_STREAM): every IPv4 and IPv6 result, in the resolver's order.
    static func lookup(host: String, port: Int) throws -> [SocketAddress] {
        if let addresses = literalAddresses(host: host, port: port) { return addresses }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc) || canImport(Musl)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0 else {
            throw AsyncSocketError.dns(DNSLookupError(code: status, host: host))
        }
        defer { freeaddrinfo(result) }
        var addresses: [SocketAddress] = []
        var cursor = result
        while let info = cursor {
            if let address = socketAddress(info.pointee.ai_addr, port: port) {
                addresses.append(address)
            }
            cursor = info.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw AsyncSocketError.dns(DNSLookupError(code: EAI_FAIL, host: host))
        }
        return addresses
    }

    private static func socketAddress(_ pointer: UnsafeMutablePointer<sockaddr>?, port: Int) -> SocketAddress? {
        guard let pointer else { return nil }
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            var address = pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
            // Some resolvers answer port 0 for numeric services (the original's issue #429).
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            return SocketAddress(address, host: "")
        case AF_INET6:
            var address = pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            return SocketAddress(address, host: "")
        default:
            return nil
        }
    }

    /// The first address of each enabled family, the preferred family first.
    static func candidates(
        from addresses: [SocketAddress],
        ipv4Enabled: Bool,
        ipv6Enabled: Bool,
        preferIPv4: Bool
    ) -> [SocketAddress] {
        let v4 = ipv4Enabled ? addresses.first { $0.protocol == .inet } : nil
        let v6 = ipv6Enabled ? addresses.first { $0.protocol == .inet6 } : nil
        let ordered = preferIPv4 ? [v4, v6] : [v6, v4]
        return ordered.compactMap { $0 }
    }
}
