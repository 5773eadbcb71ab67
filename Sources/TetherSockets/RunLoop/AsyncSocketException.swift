/// Thrown by the RunLoop-era faces (``AsyncSocket``, ``AsyncUdpSocket``) where the Objective-C originals raised an
/// `AsyncSocketException` or `AsyncUdpSocketException`: misuse, such as connecting without a delegate or binding a
/// UDP socket twice. It carries the original's reason text; there is nothing to recover, only a call to fix.
public struct AsyncSocketException: Error, Sendable, Hashable, CustomStringConvertible {
    /// The original's reason text, e.g. "Attempting to connect without a delegate. Set a delegate first."
    public var reason: String

    /// An exception with `reason`.
    public init(reason: String) {
        self.reason = reason
    }

    /// `AsyncSocketException: <reason>`.
    public var description: String { "AsyncSocketException: \(reason)" }
}
