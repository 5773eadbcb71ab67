import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// `GCDUdpDriver`'s work with the RunLoop-era `AsyncUdpSocket`: every call is made on the host's run loop, where the
/// callbacks come too.
final class RunLoopUdpDriver: AsyncUdpSocketDelegate, @unchecked Sendable {
    // Sendable: the socket and `remaining` are touched on the host's run-loop thread only.
    let host: RunLoopHost
    private var socket: AsyncUdpSocket?
    private let port: UInt16
    private var remaining = 0
    private let waiting = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private let message = Data(repeating: 0x44, count: 64)

    init(host: RunLoopHost, peerPort: Int) {
        self.host = host
        self.port = UInt16(peerPort)
    }

    /// Makes and binds the socket on the run loop.
    func bind() async throws {
        try await wait {
            let socket = AsyncUdpSocket(delegate: self)
            self.socket = socket
            try socket.bind(toAddress: "127.0.0.1", port: 0)
            self.finish(.success(()))
        }
    }

    /// Sends and receives `count` datagrams, one at a time.
    func run(count: Int) async throws {
        try await wait {
            guard let socket = self.socket else { throw HarnessError("not bound") }
            self.remaining = count
            self.exchange(socket)
        }
    }

    /// Closes the socket (on the run loop).
    func close() async throws {
        try await wait {
            self.socket?.close()
            self.socket = nil
            self.finish(.success(()))
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

    private func exchange(_ socket: AsyncUdpSocket) {
        guard socket.send(message, toHost: "127.0.0.1", port: port, withTimeout: -1, tag: 0) else {
            return finish(.failure(HarnessError("a datagram was not queued")))
        }
        socket.receive(withTimeout: -1, tag: 0)
    }

    private func finish(_ result: Result<Void, any Error>) {
        let continuation = waiting.withLockedValue { waiting in
            defer { waiting = nil }
            return waiting
        }
        continuation?.resume(with: result)
    }

    func onUdpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        withTag tag: Int,
        fromHost host: String,
        port: UInt16
    ) -> Bool {
        remaining -= 1
        if remaining > 0 { exchange(sock) } else { finish(.success(())) }
        return true
    }

    func onUdpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        finish(.failure(error ?? HarnessError("a datagram was not sent")))
    }
}
