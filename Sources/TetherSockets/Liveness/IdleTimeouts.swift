/// The idle detector's timeouts (Tether addition): after how long without reading, without writing, or without
/// either, a connection reports an ``IdleStateEvent``, with SwiftNIO's `IdleStateHandler` semantics.
///
/// The default, ``none``, reports nothing, as the originals. The detector only reports: what to do about an idle
/// connection (a ping, a close) is the application's, or a ``Heartbeat``'s.
///
/// ```swift
/// socket.idleTimeouts = try IdleTimeouts(read: .seconds(60))
/// ```
public struct IdleTimeouts: Sendable, Hashable {
    /// Time without receiving a byte before ``IdleStateEvent/read``; nil: not watched.
    public let read: Duration?
    /// Time without a completed write before ``IdleStateEvent/write``; nil: not watched.
    public let write: Duration?
    /// Time without either before ``IdleStateEvent/all``; nil: not watched.
    public let all: Duration?

    /// Nothing is watched (the default).
    public static let none = IdleTimeouts(unchecked: nil, write: nil, all: nil)

    /// Watches the given directions.
    /// - Parameters:
    ///   - read: positive, or nil.
    ///   - write: positive, or nil.
    ///   - all: positive, or nil.
    /// - Throws: ``GCDAsyncSocketError`` `.badParam` naming a timeout that is zero or negative.
    public init(read: Duration? = nil, write: Duration? = nil, all: Duration? = nil) throws {
        for (name, value) in [("read", read), ("write", write), ("all", all)] {
            if let value, value <= .zero {
                throw GCDAsyncSocketError.badParam("Idle timeout \(name) \(value) is not positive")
            }
        }
        self.init(unchecked: read, write: write, all: all)
    }

    private init(unchecked read: Duration?, write: Duration?, all: Duration?) {
        self.read = read
        self.write = write
        self.all = all
    }

    /// Whether no direction is watched.
    public var isNone: Bool { read == nil && write == nil && all == nil }
}
