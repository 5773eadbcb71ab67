import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import TetherSockets

/// Tether's two faces doing the same loops as the raw variants.
enum TetherClients {
    // MARK: async face

    static func asyncUpload(port: Int, total: Int) async throws {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        let chunk = ByteBuffer(repeating: 0x41, count: 65_536)
        var sent = 0
        while sent < total {
            try await connection.write(chunk)
            sent += chunk.readableBytes
        }
        // Done when the peer, having every byte, closes.
        while try await connection.readAvailable() != nil {}
        try await connection.close()
    }

    static func asyncDownload(port: Int) async throws -> Int {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        var count = 0
        while let chunk = try await connection.readAvailable(maxLength: 1 << 20) { count += chunk.readableBytes }
        try await connection.close()
        return count
    }

    static func asyncPingPong(port: Int, roundTrips: Int) async throws {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        let request = ByteBuffer(repeating: 0x42, count: 64)
        for _ in 0..<roundTrips {
            try await connection.write(request)
            _ = try await connection.read(toLength: 64)
        }
        try await connection.close()
    }

    // MARK: delegate face

    static func delegateUpload(port: Int, total: Int, delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        let driver = UploadDriver(total: total)
        try await driver.run(port: port, delivery: delivery)
    }

    static func delegateDownload(port: Int, delivery: GCDAsyncSocket.CallbackDelivery) async throws -> Int {
        let driver = DownloadDriver()
        try await driver.run(port: port, delivery: delivery)
        return driver.count
    }

    static func delegatePingPong(port: Int, roundTrips: Int, delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        let driver = PingPongDriver(roundTrips: roundTrips)
        try await driver.run(port: port, delivery: delivery)
    }
}

/// A delegate that completes an awaiting task once.
class Driver: GCDAsyncSocketDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "benchmark.delegate")
    let socket = GCDAsyncSocket()
    private let finished = NIOLockedValueBox<CheckedContinuation<Void, any Error>?>(nil)

    func run(port: Int, delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            finished.withLockedValue { $0 = continuation }
            socket.setDelegate(self, delegateQueue: queue)
            socket.callbackDelivery = delivery
            do {
                try socket.connect(toHost: "127.0.0.1", onPort: UInt16(port), withTimeout: 10)
            } catch {
                finish(.failure(error))
            }
        }
    }

    func finish(_ result: Result<Void, any Error>) {
        finished.withLockedValue { continuation in
            continuation?.resume(with: result)
            continuation = nil
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        finish(.failure(err ?? BenchmarkError(description: "disconnected")))
    }

    // The witnesses live here: a subclass's methods only reach the protocol as overrides of these.
    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {}
    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {}
    func socket(_ sock: GCDAsyncSocket, didWriteDataWithTag tag: Int) {}
    func socketDidSecure(_ sock: GCDAsyncSocket) {}
}

final class UploadDriver: Driver, @unchecked Sendable {
    let total: Int
    let chunk = Data(repeating: 0x41, count: 65_536)
    var queued = 0
    var written = 0
    /// When set, the upload runs over TLS (`startTLS` right after connecting).
    let tls: TLSSettings?

    init(total: Int, tls: TLSSettings? = nil) {
        self.total = total
        self.tls = tls
    }

    override func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        if let tls { sock.startTLS(tls) }
        for _ in 0..<16 { queueNext(sock) }
        // The peer closes once it has every byte: that close ends the run.
        sock.readData(withTimeout: -1, tag: 1)
    }

    private func queueNext(_ sock: GCDAsyncSocket) {
        guard queued < total else { return }
        queued += chunk.count
        sock.write(chunk, withTimeout: -1, tag: 0)
    }

    override func socket(_ sock: GCDAsyncSocket, didWriteDataWithTag tag: Int) {
        written += chunk.count
        queueNext(sock)
    }

    override func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        if (err as? GCDAsyncSocketError)?.code == .closed && written >= total {
            finish(.success(()))
        } else {
            super.socketDidDisconnect(sock, withError: err)
        }
    }
}

final class DownloadDriver: Driver, @unchecked Sendable {
    var count = 0

    override func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        sock.readData(withTimeout: -1, tag: 0)
    }

    override func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        count += data.count
        sock.readData(withTimeout: -1, tag: 0)
    }

    override func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        if (err as? GCDAsyncSocketError)?.code == .closed {
            finish(.success(()))
        } else {
            super.socketDidDisconnect(sock, withError: err)
        }
    }
}

final class PingPongDriver: Driver, @unchecked Sendable {
    var remaining: Int
    let request = Data(repeating: 0x42, count: 64)

    init(roundTrips: Int) {
        remaining = roundTrips
    }

    override func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        sock.write(request, withTimeout: -1, tag: 0)
        sock.readData(toLength: 64, withTimeout: -1, tag: 0)
    }

    override func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        remaining -= 1
        if remaining == 0 {
            finish(.success(()))
            sock.disconnect()
            return
        }
        sock.write(request, withTimeout: -1, tag: 0)
        sock.readData(toLength: 64, withTimeout: -1, tag: 0)
    }
}
