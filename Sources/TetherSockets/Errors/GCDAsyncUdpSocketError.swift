public import Foundation
import NIOCore

/// The error a UDP socket reports: a send's failure, a close, or bad configuration.
///
/// The raw values of ``Code`` are CocoaAsyncSocket's `GCDAsyncUdpSocketError` values, and NSError bridging yields
/// the original domain, so `(error as NSError).code` checks port unchanged. Errors from the system (POSIX, DNS)
/// have code ``Code/other`` and a ``domain`` that says where they came from.
///
/// ```swift
/// do { try socket.bind(toPort: 9999, interface: "nope0") }
/// catch GCDAsyncUdpSocketError.Code.badParam { print("no such interface") }
/// ```
public struct GCDAsyncUdpSocketError: Error, Sendable, CustomStringConvertible, CustomNSError {
    /// The kind of failure; raw values are the original's.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The raw error number, identical to `GCDAsyncUdpSocketError`'s.
        public let rawValue: Int
        /// Wraps a raw error number.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Never reported (0).
        public static let noError = Code(rawValue: 0)
        /// The socket was configured wrongly for the call (1): bound twice, not bound, connected, no delegate.
        public static let badConfig = Code(rawValue: 1)
        /// A parameter was invalid (2): unknown interface, malformed address, empty host, mismatched families.
        public static let badParam = Code(rawValue: 2)
        /// A send waited for buffer space longer than its timeout (3).
        public static let sendTimeout = Code(rawValue: 3)
        /// The socket was closed (4).
        public static let closed = Code(rawValue: 4)
        /// Anything else: a disabled family, POSIX, DNS (5); see ``GCDAsyncUdpSocketError/domain``.
        public static let other = Code(rawValue: 5)

        /// The code's name, e.g. `sendTimeout`.
        public var description: String {
            switch rawValue {
            case 0: "noError"
            case 1: "badConfig"
            case 2: "badParam"
            case 3: "sendTimeout"
            case 4: "closed"
            case 5: "other"
            default: "code(\(rawValue))"
            }
        }

        /// Matches an error against a code, so that `catch GCDAsyncUdpSocketError.Code.badConfig` works.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? GCDAsyncUdpSocketError)?.code == code
        }
    }

    /// What failed.
    public var code: Code
    /// Where the failure came from: `.asyncUdpSocket` when Tether raised it, else the system's domain.
    public var domain: GCDAsyncSocketError.Domain
    /// A human description, the original's text where it had one.
    public var message: String
    /// The system's error: `POSIXError` or ``DNSLookupError``.
    public var underlying: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: what failed.
    ///   - domain: where the failure came from.
    ///   - message: a human description.
    ///   - underlying: the system's error, if any.
    public init(
        code: Code,
        domain: GCDAsyncSocketError.Domain = .asyncUdpSocket,
        message: String,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.domain = domain
        self.message = message
        self.underlying = underlying
    }

    /// The errno when ``domain`` is `.posix`.
    public var posixErrorCode: POSIXErrorCode? {
        guard domain == .posix else { return nil }
        return (underlying as? POSIXError)?.code
    }

    /// `GCDAsyncUdpSocketError(code, domain): message`, with the underlying error when there is one.
    public var description: String {
        var text = "GCDAsyncUdpSocketError(\(code), \(domain.rawValue)): \(message)"
        if let underlying { text += " [\(underlying)]" }
        return text
    }

    /// `"GCDAsyncUdpSocketErrorDomain"`, as the original.
    public static var errorDomain: String { GCDAsyncSocketError.Domain.asyncUdpSocket.rawValue }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The description and, when there is one, the underlying error.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let underlying { info[NSUnderlyingErrorKey] = underlying as NSError }
        return info
    }
}

extension GCDAsyncUdpSocketError {
    static func badConfig(_ message: String) -> GCDAsyncUdpSocketError {
        GCDAsyncUdpSocketError(code: .badConfig, message: message)
    }

    static func badParam(_ message: String) -> GCDAsyncUdpSocketError {
        GCDAsyncUdpSocketError(code: .badParam, message: message)
    }

    static func other(_ message: String) -> GCDAsyncUdpSocketError {
        GCDAsyncUdpSocketError(code: .other, message: message)
    }

    static var sendTimeout: GCDAsyncUdpSocketError {
        GCDAsyncUdpSocketError(code: .sendTimeout, message: "Send operation timed out")
    }

    /// A POSIX failure of `function` (e.g. "bind"), errno kept.
    static func posix(_ errno: Int32, function: String) -> GCDAsyncUdpSocketError {
        let code = POSIXErrorCode(rawValue: errno) ?? .EIO
        return GCDAsyncUdpSocketError(
            code: .other,
            domain: .posix,
            message: "Error in \(function)() function: \(String(cString: strerror(errno)))",
            underlying: POSIXError(code)
        )
    }

    /// Maps a TCP-side or NIO error into the UDP domain, keeping POSIX and DNS details.
    static func wrapping(_ error: any Error, function: String) -> GCDAsyncUdpSocketError {
        if let own = error as? GCDAsyncUdpSocketError { return own }
        if let socketError = error as? GCDAsyncSocketError {
            switch socketError.domain {
            case .posix, .netDB, .tls:
                return GCDAsyncUdpSocketError(
                    code: .other,
                    domain: socketError.domain,
                    message: socketError.message,
                    underlying: socketError.underlying
                )
            default:
                let code: Code =
                    socketError.code == .badParam ? .badParam : socketError.code == .badConfig ? .badConfig : .other
                return GCDAsyncUdpSocketError(
                    code: code,
                    message: socketError.message,
                    underlying: socketError.underlying
                )
            }
        }
        if let errno = UDPErrno.of(error) { return .posix(errno, function: function) }
        return GCDAsyncUdpSocketError(code: .other, message: "\(error)", underlying: error)
    }
}

/// The errno behind an error NIO reported for a datagram operation, when there is one.
enum UDPErrno {
    static func of(_ error: any Error) -> Int32? {
        if let io = error as? IOError { return io.errnoCode }
        if let posix = error as? POSIXError { return posix.code.rawValue }
        if let channelError = error as? ChannelError {
            switch channelError {
            case .writeMessageTooLarge: return EMSGSIZE
            case .writeHostUnreachable: return EHOSTUNREACH
            default: return nil
            }
        }
        return nil
    }
}
