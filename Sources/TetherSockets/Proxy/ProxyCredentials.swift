/// A user name and password for a proxy: SOCKS5 username/password authentication (RFC 1929) or HTTP Basic
/// authentication (`Proxy-Authorization`).
///
/// Its description never shows the password.
public struct ProxyCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The user name (SOCKS5: 1 to 255 bytes of UTF-8).
    public var username: String
    /// The password (SOCKS5: 1 to 255 bytes of UTF-8).
    public var password: String

    /// Credentials for a proxy.
    /// - Parameters:
    ///   - username: the user name.
    ///   - password: the password.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// `user:***`: the password is never shown.
    public var description: String { "\(username):***" }
}
