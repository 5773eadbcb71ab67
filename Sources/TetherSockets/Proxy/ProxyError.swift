/// Why a proxy did not open a tunnel: its refusal (with its own reply code or HTTP status line), a failed login, an
/// answer that breaks the protocol, or a configuration that cannot be sent.
///
/// The faces report it as the ``GCDAsyncSocketError/underlying`` error of a ``GCDAsyncSocketError`` with code
/// ``GCDAsyncSocketError/Code/other`` (``GCDAsyncSocketError/proxyError`` finds it); ``AsyncSocket`` reports it
/// under `NSUnderlyingErrorKey` of its `cfSocketError`. Match it by code:
///
/// ```swift
/// do {
///     _ = try await TCPConnection.connect(host: "example.com", port: 443, proxy: proxy)
/// } catch let error as GCDAsyncSocketError where error.proxyError?.code == .authenticationFailed {
///     print("wrong proxy password")
/// }
/// ```
///
/// No message contains a password.
public struct ProxyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a number that stays stable.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The configuration cannot be used: an unsupported URL scheme, no host, a port out of range, a user name,
        /// password or target host name longer than SOCKS5's 255 bytes (1).
        public static let badConfiguration = Code(rawValue: 1)
        /// The proxy's answer breaks the protocol (a wrong version, a malformed reply or status line) (2).
        public static let protocolViolation = Code(rawValue: 2)
        /// The proxy closed the connection before the tunnel was up (3).
        public static let closedDuringHandshake = Code(rawValue: 3)
        /// The proxy wants credentials and none were given (SOCKS5: no acceptable method; HTTP: 407) (4).
        public static let authenticationRequired = Code(rawValue: 4)
        /// The proxy refused the credentials (SOCKS5: a non-zero RFC 1929 status; HTTP: 407 in answer to them) (5).
        public static let authenticationFailed = Code(rawValue: 5)
        /// The HTTP proxy answered `CONNECT` with a status other than 2xx and 407; see ``ProxyError/statusLine`` (6).
        public static let httpStatus = Code(rawValue: 6)
        /// The HTTP proxy's response header exceeded 16 KiB (7).
        public static let responseTooLarge = Code(rawValue: 7)
        /// SOCKS5 reply 0x01: general SOCKS server failure (101).
        public static let generalFailure = Code(rawValue: 101)
        /// SOCKS5 reply 0x02: connection not allowed by the proxy's rules (102).
        public static let connectionNotAllowed = Code(rawValue: 102)
        /// SOCKS5 reply 0x03: network unreachable (103).
        public static let networkUnreachable = Code(rawValue: 103)
        /// SOCKS5 reply 0x04: host unreachable (104).
        public static let hostUnreachable = Code(rawValue: 104)
        /// SOCKS5 reply 0x05: connection refused by the target (105).
        public static let connectionRefused = Code(rawValue: 105)
        /// SOCKS5 reply 0x06: TTL expired (106).
        public static let ttlExpired = Code(rawValue: 106)
        /// SOCKS5 reply 0x07: command not supported (107).
        public static let commandNotSupported = Code(rawValue: 107)
        /// SOCKS5 reply 0x08: address type not supported (108).
        public static let addressTypeNotSupported = Code(rawValue: 108)
        /// A SOCKS5 reply code that RFC 1928 does not assign (0x09–0xFF); see ``ProxyError/replyCode`` (109).
        public static let unassignedReply = Code(rawValue: 109)

        /// The code's name, e.g. `authenticationFailed`.
        public var description: String {
            switch self {
            case .badConfiguration: return "badConfiguration"
            case .protocolViolation: return "protocolViolation"
            case .closedDuringHandshake: return "closedDuringHandshake"
            case .authenticationRequired: return "authenticationRequired"
            case .authenticationFailed: return "authenticationFailed"
            case .httpStatus: return "httpStatus"
            case .responseTooLarge: return "responseTooLarge"
            case .generalFailure: return "generalFailure"
            case .connectionNotAllowed: return "connectionNotAllowed"
            case .networkUnreachable: return "networkUnreachable"
            case .hostUnreachable: return "hostUnreachable"
            case .connectionRefused: return "connectionRefused"
            case .ttlExpired: return "ttlExpired"
            case .commandNotSupported: return "commandNotSupported"
            case .addressTypeNotSupported: return "addressTypeNotSupported"
            case .unassignedReply: return "unassignedReply"
            default: return "code \(rawValue)"
            }
        }

        /// Whether `error` is a ``ProxyError`` (or a ``GCDAsyncSocketError`` carrying one) with this code: `catch
        /// ProxyError.Code.authenticationFailed`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            if let proxy = error as? ProxyError { return proxy.code == code }
            if let socket = error as? GCDAsyncSocketError { return socket.proxyError?.code == code }
            return false
        }

        /// The code for a SOCKS5 reply field other than 0 (succeeded).
        static func socks5Reply(_ reply: UInt8) -> Code {
            (1...8).contains(reply) ? Code(rawValue: 100 + Int(reply)) : .unassignedReply
        }
    }

    /// What went wrong.
    public var code: Code
    /// What the proxy said, in words: e.g. `SOCKS5 proxy 127.0.0.1:1080 refused the connection to example.com:443
    /// (reply 0x05: connection refused)` or `HTTP proxy … answered CONNECT with "HTTP/1.1 403 Forbidden"`.
    public var message: String
    /// The SOCKS5 reply field (RFC 1928 `REP`), the RFC 1929 status, or the HTTP status code; nil when the proxy
    /// sent none.
    public var replyCode: Int?
    /// The HTTP proxy's status line, e.g. `HTTP/1.1 407 Proxy Authentication Required`; nil for SOCKS5.
    public var statusLine: String?

    /// An error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: what the proxy said, in words.
    ///   - replyCode: the proxy's reply code or HTTP status.
    ///   - statusLine: the HTTP status line.
    public init(code: Code, message: String, replyCode: Int? = nil, statusLine: String? = nil) {
        self.code = code
        self.message = message
        self.replyCode = replyCode
        self.statusLine = statusLine
    }

    /// The HTTP reason phrase of ``statusLine`` (`Proxy Authentication Required`), or nil.
    public var reason: String? {
        guard let statusLine else { return nil }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        return parts.count == 3 ? String(parts[2]) : nil
    }

    /// `ProxyError(code): message`.
    public var description: String { "ProxyError(\(code)): \(message)" }
}
