import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// `GCDSocketDriver`'s work with the RunLoop-era `AsyncSocket`: every call is made on the host's run loop, where the
/// callbacks come too.
final class RunLoopSocketDriver: AsyncSocketDelegate, @unchecked Sendable {
    // Sendable: the socket and `remaining` are touched on the host's run-loop thread only.
    let host: RunLoopHost
    private var socket: AsyncSocket?
    private let closesAfterReply: Bool
    private var remaining = 0
    private let waiting = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private let message = Data(repeating: 0x42, count: 64)

    init(host: RunLoopHost, closesAfterReply: Bool) {
        self.host = host
        self.closesAfterReply = closesAfterReply
    }

    /// Connects to `port`; returns when connected, or in `closesAfterReply` mode when the exchange is done and the
    /// socket disconnected.
    func connect(port: Int) async throws {
        try await wait {
            let socket = AsyncSocket(delegate: self)
            self.socket = socket
            self.remaining = self.closesAfterReply ? 1 : 0
            try socket.connect(toHost: "127.0.0.1", onPort: UInt16(port), withTimeout: 10)
        }
    }

    /// Runs `roundTrips` round trips on the connected socket.
    func run(roundTrips: Int) async throws {
        try await wait {
            guard let socket = self.socket else { throw HarnessError("not connected") }
            self.remaining = roundTrips
            self.exchange(socket)
        }
    }

    /// Disconnects (on the run loop) and returns when the socket said it did.
    func disconnect() async throws {
        try await wait {
            guard let socket = self.socket else { throw HarnessError("not connected") }
            socket.disconnect()
        }
    }

    private func wait(_ start: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiting.withLockedValue { $0 = continuation }
            host.perform {
                do {
                    try start()
                } catch {
                    self.finish(.failure(error))
                }
            }
        }
    }

    private func exchange(_ sock: AsyncSocket) {
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

    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        if closesAfterReply { exchange(sock) } else { finish(.success(())) }
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        remaining -= 1
        if remaining > 0 {
            exchange(sock)
        } else if closesAfterReply {
            sock.disconnect()
        } else {
            finish(.success(()))
        }
    }

    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        if let err { finish(.failure(err)) }
    }

    func onSocketDidDisconnect(_ sock: AsyncSocket) {
        socket = nil
        finish(.success(()))
    }
}
