import NIOCore
import TetherResolver

/// Name resolution for both faces: numeric literals and `localhost`/`loopback` without DNS, everything else through
/// TetherResolver's `NameResolver` (getaddrinfo on NIO's thread pool, never on an event loop or a Dispatch queue).
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

    /// Resolves through TetherResolver's `NameResolver` (NIO's thread pool), off the event loop; the future completes
    /// on `eventLoop`. Fails with ``GCDAsyncSocketError`` of kind `.dns` around a ``DNSLookupError``.
    static func resolve(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<[SocketAddress]> {
        if let addresses = literalAddresses(host: host, port: port) {
            return eventLoop.makeSucceededFuture(addresses)
        }
        return NameResolver.resolve(host: host, port: port, on: eventLoop).flatMapErrorThrowing { error in
            guard let failure = error as? NameResolutionError else { throw error }
            throw GCDAsyncSocketError.dns(DNSLookupError(code: failure.code, host: host))
        }
    }

    /// Blocking getaddrinfo (AF_UNSPEC, SOCK_STREAM) on the calling thread: every IPv4 and IPv6 result, in the
    /// resolver's order.
    static func lookup(host: String, port: Int) throws -> [SocketAddress] {
        if let addresses = literalAddresses(host: host, port: port) { return addresses }
        do {
            return try NameResolver.lookup(host: host, port: port)
        } catch {
            throw GCDAsyncSocketError.dns(DNSLookupError(code: error.code, host: host))
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
