public import Foundation

/// The error ``AsyncUdpSocket`` reports in `AsyncUdpSocketErrorDomain`: a bind or connect failure, a bad parameter,
/// a family the socket no longer has, or a send or receive timeout.
///
/// Bridged to `NSError` as the original's: `errorDomain` is ``AsyncUdpSocketErrorDomain``, `errorCode` the code's raw
/// value, `NSLocalizedDescriptionKey` the original's description text and ``underlying`` (when there is one) under
/// `NSUnderlyingErrorKey`, so `(error as NSError).code == 5` checks port unchanged. Failures the original reported in
/// another domain (name resolution, a system call of a send) are reported in that domain, not as this type.
///
/// ```swift
/// func onUdpSocket(_ sock: AsyncUdpSocket, didNotReceiveDataWithTag tag: Int, dueToError error: (any Error)?) {
///     if (error as? AsyncUdpSocketError)?.code == .receiveTimeoutError { sock.receive(withTimeout: 5, tag: tag) }
/// }
/// ```
public struct AsyncUdpSocketError: Error, Sendable, CustomStringConvertible, CustomNSError {
    /// The kind of failure; raw values are the original's `AsyncUdpSocketError` values.
    public enum Code: Int, Sendable {
        /// A bind or connect failed ("General CFSocket error"), e.g. an address that is not local; see ``underlying``.
        case cfSocketError = -1
        /// Never reported.
        case noError = 0
        /// A parameter was invalid: an address of the wrong length, or a group and address that match no socket.
        case badParameter = 1
        /// IPv4 was needed but the socket has only its IPv6 socket left (``AsyncUdpSocket/init(iPv6:)``, or bound or
        /// connected by IPv6).
        case ipv4Unavailable = 2
        /// The mirror case of ``ipv4Unavailable``.
        case ipv6Unavailable = 3
        /// A send was not taken by the kernel before its timeout.
        case sendTimeoutError = 4
        /// No datagram was accepted before a receive request's timeout.
        case receiveTimeoutError = 5
    }

    /// What failed.
    public var code: Code
    /// The cause from below (a `POSIXError` of `bind`/`connect`), when there is one.
    public var underlying: (any Error)?
    /// Overrides the original's description text (e.g. for ``Code/badParameter``, which has two).
    var message: String?

    /// An error with `code` and, optionally, its cause.
    /// - Parameters:
    ///   - code: what failed.
    ///   - underlying: the cause from below, reported under `NSUnderlyingErrorKey`.
    public init(_ code: Code, underlying: (any Error)? = nil) {
        self.code = code
        self.underlying = underlying
    }

    init(_ code: Code, message: String, underlying: (any Error)? = nil) {
        self.init(code, underlying: underlying)
        self.message = message
    }

    /// The original's description text for the code, e.g. "Receive operation timed out".
    var originalDescription: String {
        if let message { return message }
        switch code {
        case .cfSocketError: return "General CFSocket error"
        case .noError: return "No error"
        case .badParameter: return "remoteAddr parameter is not a valid address"
        case .ipv4Unavailable: return "IPv4 is unavailable due to binding/connecting using IPv6 only"
        case .ipv6Unavailable:
            return "IPv6 is unavailable due to binding/connecting using IPv4 only or is not supported on this platform"
        case .sendTimeoutError: return "Send operation timed out"
        case .receiveTimeoutError: return "Receive operation timed out"
        }
    }

    /// `AsyncUdpSocketError(<raw code>): <description>`, with the underlying error when there is one.
    public var description: String {
        var text = "AsyncUdpSocketError(\(code.rawValue)): \(originalDescription)"
        if let underlying { text += " [\(underlying)]" }
        return text
    }

    /// ``AsyncUdpSocketErrorDomain`` (`"AsyncUdpSocketErrorDomain"`), as the original.
    public static var errorDomain: String { AsyncUdpSocketErrorDomain }
    /// The code's raw value (−1…5).
    public var errorCode: Int { code.rawValue }
    /// `NSLocalizedDescriptionKey`: the original's description; `NSUnderlyingErrorKey`: ``underlying``, if any.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: originalDescription]
        if let underlying { info[NSUnderlyingErrorKey] = underlying as NSError }
        return info
    }
}
