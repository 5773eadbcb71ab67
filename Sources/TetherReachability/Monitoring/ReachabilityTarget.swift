import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a manager evaluates reachability for.
enum ReachabilityTarget: Sendable, Hashable {
    /// "Any route": the zero address of AFNetworking's `+manager`; reachable when a usable default route exists.
    case defaultRoute
    /// One IPv4 or IPv6 address.
    case address(IPAddressBytes)
    /// A host name, resolved on each evaluation; reachable when any of its addresses is.
    case domain(String)
}

/// The bytes of an IPv4 (4 bytes) or IPv6 (16 bytes) address, in network order.
struct IPAddressBytes: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    enum Family: Sendable, Hashable {
        case ipv4, ipv6

        var byteCount: Int { self == .ipv4 ? 4 : 16 }
    }

    let family: Family
    let bytes: [UInt8]

    init?(family: Family, bytes: [UInt8]) {
        guard bytes.count == family.byteCount else { return nil }
        self.family = family
        self.bytes = bytes
    }

    /// Parses a numeric address ("10.0.0.1", "::1").
    init?(_ text: String) {
        var v4 = [UInt8](repeating: 0, count: 4)
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(family: .ipv4, bytes: v4)
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            self.init(family: .ipv6, bytes: v6)
        } else {
            return nil
        }
    }

    /// The address of an IPv4 or IPv6 socket address; `nil` for a Unix domain socket address.
    init?(_ address: SocketAddress) {
        switch address {
        case .v4, .v6:
            // A scoped IPv6 address ("fe80::1%eth0") is evaluated without its scope.
            guard let text = address.ipAddress?.split(separator: "%").first else { return nil }
            self.init(String(text))
        case .unixDomainSocket:
            return nil
        }
    }

    /// Whether the first `prefixLength` bits equal those of `network`.
    func isCovered(by network: IPAddressBytes?, prefixLength: Int) -> Bool {
        guard prefixLength > 0 else { return true }
        guard let network, network.family == family, prefixLength <= bytes.count * 8 else { return false }
        let wholeBytes = prefixLength / 8
        for index in 0..<wholeBytes where bytes[index] != network.bytes[index] {
            return false
        }
        let remainingBits = prefixLength % 8
        guard remainingBits > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - remainingBits)
        return bytes[wholeBytes] & mask == network.bytes[wholeBytes] & mask
    }

    /// The address as `inet_ntop` writes it ("10.0.0.1", "2001:db8::1").
    var description: String {
        var text = [CChar](repeating: 0, count: 64)
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family == .ipv4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        guard written != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
