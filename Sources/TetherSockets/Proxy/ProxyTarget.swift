import NIOCore

#if canImport(Glibc)
import CNIOLinux
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the tunnel goes: the host (a name, an IPv4 or an IPv6 literal) and port the application asked for.
struct ProxyTarget: Sendable, Hashable {
    var host: String
    var port: Int

    /// How SOCKS5 addresses the host (RFC 1928 `ATYP`), and how HTTP writes it in the request target.
    enum Address: Equatable {
        case ipv4([UInt8])
        case ipv6([UInt8])
        case domainName(String)
    }

    var address: Address {
        if let ipv4 = try? SocketAddress(ipAddress: host, port: 0), case .v4(let v4) = ipv4 {
            return .ipv4(withUnsafeBytes(of: v4.address.sin_addr) { Array($0) })
        }
        if let ipv6 = try? SocketAddress(ipAddress: host, port: 0), case .v6(let v6) = ipv6 {
            return .ipv6(withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) })
        }
        return .domainName(host)
    }

    /// `host:port`, an IPv6 literal in brackets (an HTTP request target, RFC 9110 §9.3.6).
    var authority: String {
        if case .ipv6 = address { return "[\(host)]:\(port)" }
        return "\(host):\(port)"
    }

    /// The target of a connect call: a host and port, or an address (a unix path has none).
    init?(_ target: TCPConnector.Target) {
        switch target {
        case .host(let host, let port):
            self.init(host: host, port: port)
        case .address(let address):
            guard let host = address.ipAddress, let port = address.port else { return nil }
            self.init(host: host, port: port)
        case .unixPath:
            return nil
        }
    }

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}
