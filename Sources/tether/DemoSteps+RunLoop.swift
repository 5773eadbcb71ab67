import Foundation
import TetherConcurrency
import TetherSockets

extension DemoSteps {
    /// The first seed's echo client, written against the RunLoop-era `AsyncSocket`: a thread runs its run loop; an
    /// `AsyncSocket` listener on it echoes lines; the client connects, writes a line with `writeData`, reads the
    /// reply to CRLF, and disconnects (`onSocketDidDisconnect` before `disconnect` returns).
    static func runLoopEcho() async throws -> String {
        let echo = RunLoopEcho()
        return try await echo.run()
    }
}

/// The demo's run-loop thread, its echo server and its seed-style client.
// Sendable: the sockets and `accepted` are touched on the run-loop thread only (callbacks and the blocks performed
// there); `result` is behind its own lock.
private final class RunLoopEcho: AsyncSocketDelegate, @unchecked Sendable {
    private let listener = AsyncSocket()
    private let client = AsyncSocket()
    private var accepted: [AsyncSocket] = []
    private let result = LockedBox<CheckedContinuation<String, any Error>?>(nil)
    private var events: [String] = []

    func run() async throws -> String {
        listener.delegate = self
        client.delegate = self
        return try await withCheckedThrowingContinuation { continuation in
            result.withLock { $0 = continuation }
            Thread.detachNewThread { [self] in
                do {
                    try listener.accept(onInterface: "127.0.0.1", port: 0)
                    try client.connect(toHost: "127.0.0.1", onPort: listener.localPort(), withTimeout: 5)
                    client.write(Data("hello from the seed\r\n".utf8), withTimeout: 5, tag: 1)
                    client.readData(to: AsyncSocket.crlfData(), withTimeout: 5, tag: 2)
                } catch {
                    finish(.failure(error))
                }
                while result.withLock({ $0 != nil }) {
                    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1))
                }
            }
        }
    }

    private func finish(_ outcome: Result<String, any Error>) {
        result.withLock { continuation in
            continuation?.resume(with: outcome)
            continuation = nil
        }
    }

    func onSocket(_ sock: AsyncSocket, didAcceptNewSocket newSocket: AsyncSocket) {
        accepted.append(newSocket)
        newSocket.readData(to: AsyncSocket.crlfData(), withTimeout: 5, tag: 0)
    }

    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        if sock === client { events.append("connected to \(host):\(port)") }
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        guard sock === client else {
            sock.write(data, withTimeout: 5, tag: 0)
            sock.readData(to: AsyncSocket.crlfData(), withTimeout: 5, tag: 0)
            return
        }
        let line = String(decoding: data.dropLast(2), as: UTF8.self)
        events.append("echoed \"\(line)\"")
        sock.disconnect()
        let synchronous = events.last == "onSocketDidDisconnect"
        listener.disconnect()
        for socket in accepted { socket.disconnect() }
        let order = events.joined(separator: " → ")
        guard synchronous else { return finish(.failure(DemoFailure(description: "no didDisconnect: \(order)"))) }
        finish(.success(order))
    }

    func onSocketDidDisconnect(_ sock: AsyncSocket) {
        if sock === client { events.append("onSocketDidDisconnect") }
    }

    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        if let err, sock === client { finish(.failure(err)) }
    }
}
