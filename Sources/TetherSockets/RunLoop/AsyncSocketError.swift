public import Foundation

/// An error of the RunLoop-era TCP face (``AsyncSocket``), in `AsyncSocketErrorDomain` with the original's codes
/// (they differ from ``GCDAsyncSocketError``'s: e.g. a connect timeout is 2 here, 3 there).
///
/// Only Tether's own conditions use this type. Causes from below keep their own domain, as CFNetwork's did, and
/// arrive as `NSError`: refused, reset, unreachable → `NSPOSIXErrorDomain` with the errno; a name lookup →
/// `"kCFStreamErrorDomainNetDB"` with the `EAI_*` code; TLS → `"kCFStreamErrorDomainSSL"` with the nearest
/// SecureTransport code. Read any of them with `err as NSError`. A peer's clean close is no error at all (`nil`).
public struct AsyncSocketError: Error, Sendable, CustomStringConvertible, CustomNSError {
    /// The original's `AsyncSocketError` values.
    public enum Code: Int, Sendable {
        /// "General CFSocket error": a listen that failed (e.g. the port is in use), bad TLS settings, and other
        /// failures of the socket itself; ``AsyncSocketError/underlying`` says which.
        case cfSocketError = -1
        /// Never reported.
        case noError = 0
        /// `onSocketWillConnect` returned false: "Connection canceled".
        case canceledError = 1
        /// "Attempt to connect to host timed out".
        case connectTimeoutError = 2
        /// A separator read passed its maximum length: "Read operation reached set maximum length".
        case readMaxedOutError = 3
        /// "Read operation timed out".
        case readTimeoutError = 4
        /// "Write operation timed out".
        case writeTimeoutError = 5
        /// Tether addition: no reply to the ``Heartbeat``'s ping came within its timeout.
        case heartbeatTimeoutError = 6

        /// The original's default description.
        public var message: String {
            switch self {
            case .cfSocketError: "General CFSocket error"
            case .noError: "No error"
            case .canceledError: "Connection canceled"
            case .connectTimeoutError: "Attempt to connect to host timed out"
            case .readMaxedOutError: "Read operation reached set maximum length"
            case .readTimeoutError: "Read operation timed out"
            case .writeTimeoutError: "Write operation timed out"
            case .heartbeatTimeoutError: "No reply to the heartbeat within its timeout"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// The cause behind a `.cfSocketError` (e.g. a bad TLS setting, a failed listen), when there is one.
    public var underlying: (any Error)?

    /// An error with `code`, caused by `underlying`.
    public init(code: Code, underlying: (any Error)? = nil) {
        self.code = code
        self.underlying = underlying
    }

    /// `AsyncSocketError(<code>): <message>`, with the underlying error when there is one.
    public var description: String {
        var text = "AsyncSocketError(\(code.rawValue)): \(code.message)"
        if let underlying { text += " [\(underlying)]" }
        return text
    }

    /// `"AsyncSocketErrorDomain"`.
    public static var errorDomain: String { AsyncSocketErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The description and, when there is one, the underlying error.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: code.message]
        if let underlying { info[NSUnderlyingErrorKey] = underlying as NSError }
        return info
    }
}
