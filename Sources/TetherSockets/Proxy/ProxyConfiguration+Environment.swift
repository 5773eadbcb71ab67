public import Foundation

extension ProxyConfiguration {
    /// The proxy curl would use for a connection to `host`:`port`, from the environment: `NO_PROXY` first, then
    /// `HTTPS_PROXY` (only when `secure`: the connection will run TLS), then `ALL_PROXY`.
    ///
    /// As curl reads them: each name in lower case first (`https_proxy`, `all_proxy`, `no_proxy`), then in upper
    /// case; an empty value counts as unset. The proxy URL is read by ``init(url:)`` (`socks5://`, `socks5h://`,
    /// `http://`, no scheme = HTTP). `NO_PROXY` is a comma-separated list: `*` alone excludes every host; a name
    /// excludes itself and its subdomains (`example.com` and `.example.com` both exclude `example.com` and
    /// `www.example.com`, not `notexample.com`), case-insensitively and ignoring a trailing dot; an IP address
    /// excludes itself, and `address/bits` (CIDR) the addresses in it. The port plays no part.
    ///
    /// ```swift
    /// let proxy = try ProxyConfiguration.fromEnvironment(host: "example.com", port: 443, secure: true)
    /// let connection = try await TCPConnection.connect(host: "example.com", port: 443, tls: .client(), proxy: proxy)
    /// ```
    /// - Parameters:
    ///   - host: the target host (a name or an IP address, IPv6 with or without brackets).
    ///   - port: the target port.
    ///   - secure: whether the connection will run TLS (then `HTTPS_PROXY` applies).
    ///   - environment: the variables; the process's by default.
    /// - Returns: the proxy, or nil for a direct connection.
    /// - Throws: ``ProxyError`` `.badConfiguration` when the variable that applies is not a usable proxy URL.
    public static func fromEnvironment(
        host: String,
        port: Int,
        secure: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ProxyConfiguration? {
        func variable(_ name: String) -> String? {
            for key in [name.lowercased(), name.uppercased()] {
                if let value = environment[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
            }
            return nil
        }
        if let noProxy = variable("no_proxy"), Self.noProxy(noProxy, excludes: host) { return nil }
        let names = secure ? ["https_proxy", "all_proxy"] : ["all_proxy"]
        for name in names {
            if let value = variable(name) { return try ProxyConfiguration(url: value) }
        }
        return nil
    }

    /// Whether the `NO_PROXY` list `list` excludes `host` (curl's rules; see
    /// ``fromEnvironment(host:port:secure:environment:)``).
    /// - Parameters:
    ///   - list: the comma-separated entries.
    ///   - host: the target host.
    /// - Returns: true when the connection goes direct.
    public static func noProxy(_ list: String, excludes host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        while name.hasSuffix(".") { name.removeLast() }
        let hostAddress = ProxyTarget(host: name, port: 0).address
        let entries = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if entries == ["*"] { return true }
        for var entry in entries where !entry.isEmpty {
            if case .domainName = hostAddress {
                while entry.hasPrefix(".") { entry.removeFirst() }
                while entry.hasSuffix(".") { entry.removeLast() }
                if !entry.isEmpty && (name == entry || name.hasSuffix("." + entry)) { return true }
            } else if Self.addressEntry(entry, contains: hostAddress) {
                return true
            }
        }
        return false
    }

    /// Whether an IP entry (`192.168.1.1`, `[::1]`, `10.0.0.0/8`, `fd00::/8`) contains `address`.
    private static func addressEntry(_ entry: String, contains address: ProxyTarget.Address) -> Bool {
        let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
        var text = parts.first ?? ""
        if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        let network: [UInt8]
        let host: [UInt8]
        switch (ProxyTarget(host: text, port: 0).address, address) {
        case (.ipv4(let a), .ipv4(let b)), (.ipv6(let a), .ipv6(let b)):
            network = a
            host = b
        default:
            return false
        }
        var bits = network.count * 8
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...bits).contains(prefix) else { return false }
            bits = prefix
        }
        for index in 0..<network.count {
            let remaining = bits - index * 8
            if remaining <= 0 { break }
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if network[index] & mask != host[index] & mask { return false }
        }
        return true
    }
}
