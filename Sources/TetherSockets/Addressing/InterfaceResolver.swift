import NIOCore
import NIOPosix

/// Resolves the original's interface strings: a name (`"eth0"`, `"lo"`), a numeric IP, `"localhost"`/`"loopback"`,
/// each optionally followed by `":port"` (or only `":port"`), into local addresses to bind.
enum InterfaceResolver {
    struct Resolved: Equatable {
        var ipv4: SocketAddress?
        var ipv6: SocketAddress?
        var port: Int
        /// The caller fixed the local port, so address reuse is enabled before binding.
        var fixesPort: Bool
    }

    /// - Returns: nil for a nil interface (wildcard); throws `.badParam` for an unknown interface or a bad port.
    static func resolve(_ interface: String?, defaultPort: Int = 0) throws -> Resolved? {
        guard let interface else { return nil }
        var name = interface
        var port = defaultPort
        var fixesPort = false
        if let colon = interface.lastIndex(of: ":"), !isBareIPv6(interface) {
            let portText = interface[interface.index(after: colon)...]
            guard let parsed = Int(portText), (0...65_535).contains(parsed) else {
                throw GCDAsyncSocketError.badParam("Invalid port in interface \"\(interface)\"")
            }
            port = parsed
            fixesPort = parsed != 0
            name = String(interface[..<colon])
        }
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.isEmpty {
            return Resolved(
                ipv4: try? SocketAddress(ipAddress: "0.0.0.0", port: port),
                ipv6: try? SocketAddress(ipAddress: "::", port: port),
                port: port,
                fixesPort: fixesPort
            )
        }
        let lowered = name.lowercased()
        if lowered == "localhost" || lowered == "loopback" {
            return Resolved(
                ipv4: try? SocketAddress(ipAddress: "127.0.0.1", port: port),
                ipv6: try? SocketAddress(ipAddress: "::1", port: port),
                port: port,
                fixesPort: fixesPort
            )
        }
        if let literal = try? SocketAddress(ipAddress: name, port: port) {
            return Resolved(
                ipv4: literal.protocol == .inet ? literal : nil,
                ipv6: literal.protocol == .inet6 ? literal : nil,
                port: port,
                fixesPort: fixesPort
            )
        }
        let interfaces = (try? System.enumerateDevices()) ?? []
        var resolved = Resolved(ipv4: nil, ipv6: nil, port: port, fixesPort: fixesPort)
        for device in interfaces where device.name == name {
            guard let address = device.address else { continue }
            if address.protocol == .inet, resolved.ipv4 == nil {
                resolved.ipv4 = try? SocketAddress(ipAddress: address.ipAddress ?? "", port: port)
            } else if address.protocol == .inet6, resolved.ipv6 == nil {
                if let ip = address.ipAddress, !ip.lowercased().hasPrefix("fe80") {
                    resolved.ipv6 = try? SocketAddress(ipAddress: ip, port: port)
                }
            }
        }
        guard resolved.ipv4 != nil || resolved.ipv6 != nil else {
            throw GCDAsyncSocketError.badParam(
                "Unknown interface. Specify valid interface by name (e.g. \"eth0\") or IP address."
            )
        }
        return resolved
    }

    private static func isBareIPv6(_ text: String) -> Bool {
        text.filter { $0 == ":" }.count > 1 && !text.hasPrefix("[")
    }
}
