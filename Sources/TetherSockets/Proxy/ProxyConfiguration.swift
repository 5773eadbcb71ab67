import Foundation

/// A proxy that a TCP connection goes through: a SOCKS5 proxy (RFC 1928) or an HTTP proxy that opens a tunnel with
/// `CONNECT` (RFC 9110 §9.3.6), with or without credentials.
///
/// The socket connects to the proxy, asks it for a tunnel to the target host and port, and hands the connection to
/// its face only once the tunnel is up: reads, writes and `startTLS` then run end to end with the target, and TLS
/// verifies the target's name, never the proxy's. Target host names are sent to the proxy unresolved (the proxy
/// resolves them, as curl's `socks5h://`), so no name lookup leaks from this machine.
///
/// Set it per socket: ``GCDAsyncSocket/proxy``, ``AsyncSocket/proxy``, or the `proxy:` parameter of
/// ``TCPConnection/connect(host:port:timeout:tls:proxy:on:logger:)``; or read it from the environment with
/// ``fromEnvironment(host:port:secure:environment:)``.
///
/// ```swift
/// let proxy = ProxyConfiguration.socks5(
///     host: "127.0.0.1", port: 1080, credentials: ProxyCredentials(username: "me", password: "secret"))
/// let connection = try await TCPConnection.connect(host: "example.com", port: 443, tls: .client(), proxy: proxy)
/// ```
///
/// Its description shows the password as `***`.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The proxy protocol.
    public enum Kind: String, Sendable, Hashable {
        /// SOCKS version 5 (RFC 1928), with username/password authentication (RFC 1929) when credentials are set.
        case socks5
        /// HTTP `CONNECT`, with `Proxy-Authorization: Basic` when credentials are set.
        case httpConnect
    }

    /// The proxy protocol.
    public var kind: Kind
    /// The proxy's host name or IP address.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The credentials to authenticate with, or nil for none.
    public var credentials: ProxyCredentials?

    /// A proxy of `kind` at `host`:`port`.
    public init(kind: Kind, host: String, port: Int, credentials: ProxyCredentials? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// A SOCKS5 proxy (RFC 1928); with `credentials`, username/password authentication (RFC 1929) is offered.
    /// - Parameters:
    ///   - host: the proxy's host name or IP address.
    ///   - port: the proxy's port (often 1080).
    ///   - credentials: the user name and password, or nil.
    public static func socks5(host: String, port: Int, credentials: ProxyCredentials? = nil) -> ProxyConfiguration {
        ProxyConfiguration(kind: .socks5, host: host, port: port, credentials: credentials)
    }

    /// An HTTP proxy that opens tunnels with `CONNECT`; with `credentials`, Basic authentication is sent.
    /// - Parameters:
    ///   - host: the proxy's host name or IP address.
    ///   - port: the proxy's port (often 3128 or 8080).
    ///   - credentials: the user name and password, or nil.
    public static func httpConnect(
        host: String,
        port: Int,
        credentials: ProxyCredentials? = nil
    ) -> ProxyConfiguration {
        ProxyConfiguration(kind: .httpConnect, host: host, port: port, credentials: credentials)
    }

    /// Reads a proxy URL as curl does: `socks5://`, `socks5h://` (SOCKS5) or `http://` (CONNECT), optional
    /// percent-encoded `user:password@`, a host (IPv6 in brackets) and a port. A URL without a scheme is an HTTP
    /// proxy; without a port, 1080 (SOCKS5) or 80 (HTTP), as curl.
    /// - Parameter string: the URL, e.g. `socks5://user:pass@127.0.0.1:1080`.
    /// - Throws: ``ProxyError`` `.badConfiguration` for another scheme (`https://`, `socks4://`), a missing host,
    ///   a port outside 1...65535, or text that is not a URL. The message never contains the password.
    public init(url string: String) throws {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        let text = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw ProxyError(code: .badConfiguration, message: "Not a proxy URL: \(Self.redacted(trimmed))")
        }
        let kind: Kind
        let defaultPort: Int
        switch scheme {
        case "socks5", "socks5h":
            kind = .socks5
            defaultPort = 1080
        case "http":
            kind = .httpConnect
            defaultPort = 80
        default:
            throw ProxyError(
                code: .badConfiguration,
                message: "Unsupported proxy scheme \(scheme):// (use socks5://, socks5h:// or http://)"
            )
        }
        var host = components.percentEncodedHost ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = host.removingPercentEncoding ?? host
        guard !host.isEmpty else {
            throw ProxyError(code: .badConfiguration, message: "No host in proxy URL \(Self.redacted(trimmed))")
        }
        let port = components.port ?? defaultPort
        guard (1...65_535).contains(port) else {
            throw ProxyError(code: .badConfiguration, message: "Proxy port \(port) is out of range")
        }
        var credentials: ProxyCredentials?
        if let user = components.percentEncodedUser {
            let password = components.percentEncodedPassword ?? ""
            credentials = ProxyCredentials(
                username: user.removingPercentEncoding ?? user,
                password: password.removingPercentEncoding ?? password
            )
        }
        self.init(kind: kind, host: host, port: port, credentials: credentials)
    }

    /// The proxy as a URL, the password shown as `***`: `socks5://user:***@127.0.0.1:1080`.
    public var description: String {
        let scheme = kind == .socks5 ? "socks5" : "http"
        let user = credentials.map { "\($0.username):***@" } ?? ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(user)\(shownHost):\(port)"
    }

    /// `text` with any `user:password@` part's password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard start < at, let colon = text[start..<at].firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}
