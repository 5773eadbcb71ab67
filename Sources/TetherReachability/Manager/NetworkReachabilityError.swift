import Foundation

/// Why a reachability back-end could not evaluate; read it from ``NetworkReachabilityManager/lastError``.
public struct NetworkReachabilityError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure happened.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's number.
        public let rawValue: Int

        /// Creates a code from its number.
        /// - Parameter rawValue: the code's number.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The back-end could not start: the netlink socket was refused (seccomp, an old kernel), or no back-end
        /// exists on this platform.
        public static let backendUnavailable = Code(rawValue: 1)
        /// The back-end failed after it started (a netlink receive or dump failed); monitoring continues.
        public static let backendFailed = Code(rawValue: 2)
        /// The back-end did not answer its initial state query in time.
        public static let timedOut = Code(rawValue: 3)
        /// ``NetworkReachabilityManager/waitForConnectivity(timeout:)`` saw no route to its target within its
        /// timeout.
        public static let connectivityTimedOut = Code(rawValue: 4)
        /// The host to wait for is not a host name or an IP address (it is empty).
        public static let invalidHost = Code(rawValue: 5)

        /// The code's name.
        public var description: String {
            switch self {
            case .backendUnavailable: "backendUnavailable"
            case .backendFailed: "backendFailed"
            case .timedOut: "timedOut"
            case .connectivityTimedOut: "connectivityTimedOut"
            case .invalidHost: "invalidHost"
            default: "code \(rawValue)"
            }
        }

        /// Matches a `NetworkReachabilityError` with this code, so `catch NetworkReachabilityError.Code.x` works.
        /// - Parameters:
        ///   - code: the code to match.
        ///   - error: the error being matched.
        /// - Returns: whether `error` is a `NetworkReachabilityError` with `code`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? NetworkReachabilityError)?.code == code
        }
    }

    /// What kind of failure happened.
    public var code: Code
    /// What failed, in words.
    public var message: String
    /// The cause, usually a `POSIXError` carrying the errno.
    public var underlying: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: what kind of failure happened.
    ///   - message: what failed, in words.
    ///   - underlying: the cause, if any.
    public init(code: Code, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The code, the message and the underlying error.
    public var description: String {
        if let underlying {
            return "NetworkReachabilityError.\(code): \(message) (\(underlying))"
        }
        return "NetworkReachabilityError.\(code): \(message)"
    }

    /// An error for a failed system call, keeping its errno as a `POSIXError`.
    static func posix(_ code: Code, _ message: String, errno number: Int32) -> NetworkReachabilityError {
        let underlying: (any Error)? = POSIXErrorCode(rawValue: number).map { POSIXError($0) }
        return NetworkReachabilityError(code: code, message: message, underlying: underlying)
    }
}
