import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// A `GCDAsyncUdpSocket` delegate that sends 64 bytes to the echo peer and sends again on each echo, as often as
/// asked.
final class GCDUdpDriver: GCDAsyncUdpSocketDelegate, @unchecked Sendable {
    // Sendable: `remaining` is set before a run starts (the socket's calls order it before its callbacks) and then
    // touched in the socket's callbacks only, which run one at a time.
    let socket: GCDAsyncUdpSocket
    private let port: UInt16
    private var remaining = 0
    private let waiting = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private let message = Data(repeating: 0x44, count: 64)

    init(peerPort: Int, delivery: GCDAsyncSocket.CallbackDelivery) throws {
        port = UInt16(peerPort)
        socket = GCDAsyncUdpSocket(delegate: nil, delegateQueue: GCDSocketDriver.queue)
        socket.setDelegate(self)
        socket.callbackDelivery = delivery
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        try socket.beginReceiving()
    }

    /// Sends and receives `count` datagrams, one at a time.
    func run(count: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiting.withLockedValue { $0 = continuation }
            remaining = count
            send(socket)
        }
    }

    private func send(_ socket: GCDAsyncUdpSocket) {
        socket.send(message, toHost: "127.0.0.1", port: port, withTimeout: -1, tag: 0)
    }

    private func finish(_ result: Result<Void, any Error>) {
        let continuation = waiting.withLockedValue { waiting in
            defer { waiting = nil }
            return waiting
        }
        continuation?.resume(with: result)
    }

    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {
        remaining -= 1
        if remaining > 0 { send(sock) } else { finish(.success(())) }
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        finish(.failure(error ?? HarnessError("a datagram was not sent")))
    }
}
