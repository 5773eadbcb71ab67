import TetherSockets

/// A weak reference to a ``GCDAsyncUdpSocket`` that threads can share (a race's senders must not keep it alive).
final class WeakUDPSocket: Sendable {
    weak let socket: GCDAsyncUdpSocket?

    init(_ socket: GCDAsyncUdpSocket?) {
        self.socket = socket
    }
}
