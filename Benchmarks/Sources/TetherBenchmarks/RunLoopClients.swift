import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// The RunLoop-era face (`AsyncSocket`) doing the delegate face's loops, on a thread that runs its run loop.
enum RunLoopClients {
    static func upload(port: Int, total: Int) async throws {
        try await RunLoopUploadDriver(total: total).run(port: port)
    }

    static func download(port: Int) async throws -> Int {
        let driver = RunLoopDownloadDriver()
        try await driver.run(port: port)
        return driver.count
    }

    static func pingPong(port: Int, roundTrips: Int) async throws {
        try await RunLoopPingPongDriver(roundTrips: roundTrips).run(port: port)
    }
}

/// A RunLoop-era delegate that connects from a thread of its own, runs that thread's run loop until the work is
/// done, and completes an awaiting task once.
class RunLoopDriver: AsyncSocketDelegate, @unchecked Sendable {
    // Sendable: the socket and the subclasses' counters are touched on the driver's run-loop thread only.
    let socket = AsyncSocket()
    private let finished = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)
    private let done = NIOLockedValueBox(false)

    func run(port: Int) async throws {
        socket.delegate = self
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            finished.withLockedValue { $0 = continuation }
            Thread.detachNewThread { [self] in
                do {
                    try socket.connect(toHost: "127.0.0.1", onPort: UInt16(port), withTimeout: 10)
                } catch {
                    finish(.failure(error))
                }
                while !done.withLockedValue({ $0 }) {
                    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.5))
                }
            }
        }
    }

    func finish(_ result: Result<Void, any Error>) {
        done.withLockedValue { $0 = true }
        finished.withLockedValue { continuation in
            continuation?.resume(with: result)
            continuation = nil
        }
    }

    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        finish(.failure(err ?? BenchmarkError(description: "disconnected")))
    }

    // The witnesses live here: a subclass's methods only reach the protocol as overrides of these.
    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {}
    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {}
    func onSocket(_ sock: AsyncSocket, didWriteDataWithTag tag: Int) {}
}

final class RunLoopUploadDriver: RunLoopDriver, @unchecked Sendable {
    let total: Int
    let chunk = Data(repeating: 0x41, count: 65_536)
    var queued = 0
    var written = 0

    init(total: Int) {
        self.total = total
    }

    override func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        for _ in 0..<16 { queueNext(sock) }
        // The peer closes once it has every byte: that close ends the run.
        sock.readData(withTimeout: -1, tag: 1)
    }

    private func queueNext(_ sock: AsyncSocket) {
        guard queued < total else { return }
        queued += chunk.count
        sock.write(chunk, withTimeout: -1, tag: 0)
    }

    override func onSocket(_ sock: AsyncSocket, didWriteDataWithTag tag: Int) {
        written += chunk.count
        queueNext(sock)
    }

    override func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        if err == nil && written >= total {
            finish(.success(()))
        } else {
            super.onSocket(sock, willDisconnectWithError: err)
        }
    }
}

final class RunLoopDownloadDriver: RunLoopDriver, @unchecked Sendable {
    var count = 0

    override func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        sock.readData(withTimeout: -1, tag: 0)
    }

    override func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        count += data.count
        sock.readData(withTimeout: -1, tag: 0)
    }

    override func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        if err == nil {
            // The bytes read before the peer's close plus those still unread at it.
            count += sock.unreadData()?.count ?? 0
            finish(.success(()))
        } else {
            super.onSocket(sock, willDisconnectWithError: err)
        }
    }
}

final class RunLoopPingPongDriver: RunLoopDriver, @unchecked Sendable {
    var remaining: Int
    let request = Data(repeating: 0x42, count: 64)

    init(roundTrips: Int) {
        remaining = roundTrips
    }

    override func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        sock.write(request, withTimeout: -1, tag: 0)
        sock.readData(toLength: 64, withTimeout: -1, tag: 0)
    }

    override func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        remaining -= 1
        if remaining == 0 {
            sock.delegate = nil
            sock.disconnect()
            finish(.success(()))
            return
        }
        sock.write(request, withTimeout: -1, tag: 0)
        sock.readData(toLength: 64, withTimeout: -1, tag: 0)
    }
}
