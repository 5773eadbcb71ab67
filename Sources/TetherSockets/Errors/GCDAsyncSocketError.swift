public import Foundation
import NIOCore
import NIOSSL

/// The error a TCP socket reports: an operation's failure, a close, or bad configuration.
///
/// The raw values of ``Code`` are CocoaAsyncSocket's `GCDAsyncSocketError` values, and NSError bridging yields the
/// original domain, so `(error as NSError).code` checks port unchanged. Errors that come from the system (POSIX,
/// DNS, TLS) have code ``Code/other`` and a ``domain`` that says where they came from, with the system's error
/// kept in ``underlying``.
///
/// ```swift
/// do { try socket.connect(toHost: "", onPort: 80) }
/// catch GCDAsyncSocketError.Code.badParam { print("no host") }
/// ```
public struct GCDAsyncSocketError: Error, Sendable, CustomStringConvertible, CustomNSError {
    /// The kind of failure; raw values are the original's.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The raw error number, identical to `GCDAsyncSocketError`'s.
        public let rawValue: Int
        /// Wraps a raw error number.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Never reported (0).
        public static let noError = Code(rawValue: 0)
        /// The socket was configured wrongly for the call (1): no delegate, already connected, both families off.
        public static let badConfig = Code(rawValue: 1)
        /// A parameter was invalid (2): empty host, unknown interface, malformed address, port out of range.
        public static let badParam = Code(rawValue: 2)
        /// Connecting took longer than the timeout (3).
        public static let connectTimeout = Code(rawValue: 3)
        /// A read took longer than its timeout (4).
        public static let readTimeout = Code(rawValue: 4)
        /// A write took longer than its timeout (5).
        public static let writeTimeout = Code(rawValue: 5)
        /// A separator read consumed its maximum length without finding the separator (6).
        public static let readMaxedOut = Code(rawValue: 6)
        /// The peer closed the stream (7).
        public static let closed = Code(rawValue: 7)
        /// Anything else: POSIX, DNS, TLS (8); see ``GCDAsyncSocketError/domain``.
        public static let other = Code(rawValue: 8)
        /// Tether addition (9): no reply to the ``Heartbeat``'s ping came within its timeout.
        public static let heartbeatTimeout = Code(rawValue: 9)

        /// The code's name, e.g. `readTimeout`.
        public var description: String {
            switch rawValue {
            case 0: "noError"
            case 1: "badConfig"
            case 2: "badParam"
            case 3: "connectTimeout"
            case 4: "readTimeout"
            case 5: "writeTimeout"
            case 6: "readMaxedOut"
            case 7: "closed"
            case 8: "other"
            case 9: "heartbeatTimeout"
            default: "code(\(rawValue))"
            }
        }

        /// Matches an error against a code, so that `catch GCDAsyncSocketError.Code.closed` works.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? GCDAsyncSocketError)?.code == code
        }
    }

    /// The NSError domain the original would have reported the error in.
    public enum Domain: String, Sendable, Hashable {
        /// Raised by the socket itself.
        case asyncSocket = "GCDAsyncSocketErrorDomain"
        /// Raised by a UDP socket.
        case asyncUdpSocket = "GCDAsyncUdpSocketErrorDomain"
        /// A system call failed; ``GCDAsyncSocketError/posixErrorCode`` says which errno.
        case posix = "NSPOSIXErrorDomain"
        /// Name resolution failed; ``GCDAsyncSocketError/underlying`` is a ``DNSLookupError``.
        case netDB = "kCFStreamErrorDomainNetDB"
        /// TLS failed; ``GCDAsyncSocketError/underlying`` is the TLS library's error.
        case tls = "kCFStreamErrorDomainSSL"
    }

    /// What failed.
    public var code: Code
    /// Where the failure came from: `.asyncSocket` when Tether raised it, else the system's domain.
    public var domain: Domain
    /// A human description, the original's default text where it had one (e.g. "Read operation timed out").
    public var message: String
    /// The system's error: `POSIXError`, ``DNSLookupError``, or a TLS error.
    public var underlying: (any Error)?
    /// Delegate face: every received byte that was not delivered by a completed read (partial read and buffer).
    public var unreadData: Data?
    /// Delegate face: the tags of the reads this close dropped, the current one first.
    public var pendingReadTags: [Int] = []
    /// Delegate face: the tags of the writes that did not complete, the current one first.
    public var pendingWriteTags: [Int] = []
    /// Tether addition: for an error that ended a connection, whether it had come up (``Disconnection``); nil for
    /// an error that ended none (bad input, an async-face operation that failed alone).
    public var disconnection: Disconnection?

    /// Creates an error.
    /// - Parameters:
    ///   - code: what failed.
    ///   - domain: where the failure came from.
    ///   - message: a human description.
    ///   - underlying: the system's error, if any.
    public init(code: Code, domain: Domain = .asyncSocket, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.domain = domain
        self.message = message
        self.underlying = underlying
    }

    /// The errno when ``domain`` is `.posix`.
    public var posixErrorCode: POSIXErrorCode? {
        guard domain == .posix else { return nil }
        if let posix = underlying as? POSIXError { return posix.code }
        return nil
    }

    /// `GCDAsyncSocketError(code, domain): message`, with the underlying error when there is one.
    public var description: String {
        var text = "GCDAsyncSocketError(\(code), \(domain.rawValue)): \(message)"
        if let underlying { text += " [\(underlying)]" }
        return text
    }

    /// `"GCDAsyncSocketErrorDomain"`, as the original.
    public static var errorDomain: String { Domain.asyncSocket.rawValue }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The description and, when there is one, the underlying error.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let underlying { info[NSUnderlyingErrorKey] = underlying as NSError }
        return info
    }
}

extension GCDAsyncSocketError {
    static func badConfig(_ message: String) -> GCDAsyncSocketError {
        GCDAsyncSocketError(code: .badConfig, message: message)
    }

    static func badParam(_ message: String) -> GCDAsyncSocketError {
        GCDAsyncSocketError(code: .badParam, message: message)
    }

    static var connectTimeout: GCDAsyncSocketError {
        GCDAsyncSocketError(code: .connectTimeout, message: "Attempt to connect to host timed out")
    }

    static var readTimeout: GCDAsyncSocketError {
        GCDAsyncSocketError(code: .readTimeout, message: "Read operation timed out")
    }

    static var writeTimeout: GCDAsyncSocketError {
        GCDAsyncSocketError(code: .writeTimeout, message: "Write operation timed out")
    }

    static var readMaxedOut: GCDAsyncSocketError {
        GCDAsyncSocketError(code: .readMaxedOut, message: "Read operation reached set maximum length")
    }

    static var closedByPeer: GCDAsyncSocketError {
        GCDAsyncSocketError(code: .closed, message: "Socket closed by remote peer")
    }

    static var closedLocally: GCDAsyncSocketError {
        GCDAsyncSocketError(code: .closed, message: "Socket is closed")
    }

    /// A POSIX failure of `function` (e.g. "connect"), errno kept.
    static func posix(_ errno: Int32, function: String) -> GCDAsyncSocketError {
        let code = POSIXErrorCode(rawValue: errno) ?? .EIO
        return GCDAsyncSocketError(
            code: .other,
            domain: .posix,
            message: "Error in \(function)() function: \(String(cString: strerror(errno)))",
            underlying: POSIXError(code)
        )
    }

    static func dns(_ error: DNSLookupError) -> GCDAsyncSocketError {
        GCDAsyncSocketError(code: .other, domain: .netDB, message: error.description, underlying: error)
    }

    /// Maps whatever NIO reported into the contract's error.
    static func wrapping(_ error: any Error, function: String) -> GCDAsyncSocketError {
        if let own = error as? GCDAsyncSocketError { return own }
        if let io = error as? IOError { return .posix(io.errnoCode, function: function) }
        if let posix = error as? POSIXError { return .posix(posix.code.rawValue, function: function) }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            return .tls("TLS failed: \(error)", underlying: error)
        }
        return GCDAsyncSocketError(code: .other, domain: .asyncSocket, message: "\(error)", underlying: error)
    }
}
