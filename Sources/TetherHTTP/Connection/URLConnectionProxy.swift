import Foundation

extension URLConnection {
    /// A proxy that loads go through: an HTTP proxy (plain requests in absolute form, `CONNECT` tunnels for https)
    /// or a SOCKS5 proxy.
    ///
    /// ```swift
    /// var configuration = URLConnection.Configuration()
    /// configuration.proxy = try URLConnection.Proxy(url: "http://proxy.internal:3128")
    /// ```
    public struct Proxy: Sendable, Hashable, CustomStringConvertible {
        /// The kinds of proxy.
        public enum Kind: Sendable, Hashable {
            /// An HTTP proxy.
            case http
            /// A SOCKS5 proxy (the proxy resolves host names).
            case socks5
        }

        /// The kind of proxy.
        public var kind: Kind
        /// The proxy's host.
        public var host: String
        /// The proxy's port.
        public var port: Int
        /// The user and password sent to an HTTP proxy (`Proxy-Authorization: Basic`); nil for none.
        public var credentials: (user: String, password: String)? {
            get { user.map { ($0, password ?? "") } }
            set {
                user = newValue?.user
                password = newValue?.password
            }
        }
        private var user: String?
        private var password: String?

        /// A proxy at `host:port`.
        public init(_ kind: Kind, host: String, port: Int) {
            self.kind = kind
            self.host = host
            self.port = port
        }

        /// A proxy from a URL as curl reads them: `http://[user:password@]host[:port]` (port 1080 when not given,
        /// as curl), `socks5://host[:port]` or `socks5h://host[:port]` (1080), or a bare `host[:port]` (HTTP).
        /// - Throws: `URLError(.badURL)` for another scheme, no host, or a bad port (its message shows the URL
        ///   without its password).
        public init(url string: String) throws {
            let text = string.contains("://") ? string : "http://" + string
            guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
                throw URLError(
                    .badURL,
                    userInfo: [NSLocalizedDescriptionKey: "not a proxy URL: \(Redaction.url(string))"]
                )
            }
            let kind: Kind
            switch components.scheme?.lowercased() {
            case "http": kind = .http
            case "socks5", "socks5h": kind = .socks5
            default:
                throw URLError(
                    .badURL,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "proxy scheme must be http, socks5 or socks5h: \(Redaction.url(string))"
                    ]
                )
            }
            let port = components.port ?? 1080
            guard (1...65535).contains(port) else {
                throw URLError(
                    .badURL,
                    userInfo: [NSLocalizedDescriptionKey: "proxy port out of range: \(Redaction.url(string))"]
                )
            }
            self.init(kind, host: host, port: port)
            if let user = components.user, kind == .http {
                credentials = (user.removingPercentEncoding ?? user, components.password?.removingPercentEncoding ?? "")
            }
        }

        public static func == (lhs: Proxy, rhs: Proxy) -> Bool {
            lhs.kind == rhs.kind && lhs.host == rhs.host && lhs.port == rhs.port && lhs.user == rhs.user
                && lhs.password == rhs.password
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(kind)
            hasher.combine(host)
            hasher.combine(port)
            hasher.combine(user)
        }

        /// `http://host:port` or `socks5://host:port`, without the credentials.
        public var description: String { "\(kind == .http ? "http" : "socks5")://\(host):\(port)" }
    }
}
