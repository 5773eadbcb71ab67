package import NIOCore
import NIOPosix

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's one name resolver: `getaddrinfo` (AF_UNSPEC, SOCK_STREAM), run on NIO's shared thread pool
/// (`NIOThreadPool.singleton`), never on an event loop and never on a Dispatch queue.
///
/// ```swift
/// let addresses = try await NameResolver.resolve(host: "example.com", port: 443, on: loop).get()
/// ```
///
/// It resolves exactly what it is given: callers that answer literals or `localhost` without DNS do so first.
package enum NameResolver {
    /// Resolves `host` on `NIOThreadPool.singleton`; the future completes on `eventLoop`.
    ///
    /// - Parameters:
    ///   - host: The host name (or numeric address) to resolve.
    ///   - port: The port every returned address carries.
    ///   - eventLoop: The loop the future completes on.
    /// - Returns: Every IPv4 and IPv6 address, in the resolver's order; fails with ``NameResolutionError``.
    package static func resolve(
        host: String,
        port: Int,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<[SocketAddress]> {
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            try Self.lookup(host: host, port: port)
        }
    }

    /// Resolves `host` on `NIOThreadPool.singleton` and returns its addresses.
    ///
    /// - Parameters:
    ///   - host: The host name (or numeric address) to resolve.
    ///   - port: The port every returned address carries.
    /// - Returns: Every IPv4 and IPv6 address, in the resolver's order.
    /// - Throws: ``NameResolutionError``.
    package static func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        try await NIOThreadPool.singleton.runIfActive {
            try Self.lookup(host: host, port: port)
        }
    }

    /// Blocking `getaddrinfo` on the calling thread: only for threads of the caller's own that may block (never an
    /// event loop); everything else uses ``resolve(host:port:on:)``.
    ///
    /// - Parameters:
    ///   - host: The host name (or numeric address) to resolve.
    ///   - port: The port every returned address carries.
    /// - Returns: Every IPv4 and IPv6 address, in the resolver's order (never empty).
    /// - Throws: ``NameResolutionError`` with `getaddrinfo`'s status, or `EAI_FAIL` when no address came back.
    package static func lookup(host: String, port: Int) throws(NameResolutionError) -> [SocketAddress] {
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
        guard status == 0 else { throw NameResolutionError(code: status) }
        defer { freeaddrinfo(result) }
        var addresses: [SocketAddress] = []
        var cursor = result
        while let info = cursor {
            if let address = Self.socketAddress(info.pointee.ai_addr, port: port) {
                addresses.append(address)
            }
            cursor = info.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw NameResolutionError(code: EAI_FAIL) }
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
}
