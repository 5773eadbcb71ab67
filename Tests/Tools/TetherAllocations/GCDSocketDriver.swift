import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// A `GCDAsyncSocket` delegate that connects, then runs round trips of 64 bytes (write, read to length) when asked,
/// and, in `closesAfterReply` mode, disconnects after the first reply.
final class GCDSocketDriver: GCDAsyncSocketDelegate, @unchecked Sendable {
    // Sendable: `remaining` is set before a run starts (the socket's calls order it before its callbacks) and then
    // touched in the socket's callbacks only, which run one at a time.
    static let queue = DispatchQueue(label: "tether.allocations.delegate")
    let socket: GCDAsyncSocket
    private let closesAfterReply: Bool
    private var remaining = 0
    private let waiting = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private let message = Data(repeating: 0x42, count: 64)

    init(delivery: GCDAsyncSocket.CallbackDelivery, closesAfterReply: Bool) {
        self.closesAfterReply = closesAfterReply
        socket = GCDAsyncSocket(delegate: nil, delegateQueue: Self.queue)
        socket.callbackDelivery = delivery
        socket.setDelegate(self, delegateQueue: Self.queue)
    }

    /// Connects to `port`; returns when connected, or in `closesAfterReply` mode when the exchange is done and the
    /// socket disconnected.
    func connect(port: Int) async throws {
        remaining = closesAfterReply ? 1 : 0
        try await wait {
            try self.socket.connect(toHost: "127.0.0.1", onPort: UInt16(port), withTimeout: 10)
        }
    }

    /// Runs `roundTrips` round trips on the connected socket.
    func run(roundTrips: Int) async throws {
        remaining = roundTrips
        try await wait { self.exchange(self.socket) }
    }

    private func wait(_ start: @escaping () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiting.withLockedValue { $0 = continuation }
            do {
                try start()
            } catch {
                finish(.failure(error))
            }
        }
    }

    private func exchange(_ sock: GCDAsyncSocket) {
        sock.write(message, withTimeout: -1, tag: 0)
        sock.readData(toLength: UInt(message.count), withTimeout: -1, tag: 0)
    }

    private func finish(_ result: Result<Void, any Error>) {
        let continuation = waiting.withLockedValue { waiting in
            defer { waiting = nil }
            return waiting
        }
        continuation?.resume(with: result)
    }

    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        if closesAfterReply { exchange(sock) } else { finish(.success(())) }
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        remaining -= 1
        if remaining > 0 {
            exchange(sock)
        } else if closesAfterReply {
            sock.disconnect()
        } else {
            finish(.success(()))
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        if closesAfterReply && remaining == 0 {
            finish(.success(()))
        } else {
            finish(.failure(err ?? HarnessError("disconnected")))
        }
    }
}
