import NIOCore
import TetherConcurrency
import TetherSockets
import TetherTestSupport

/// ``AsyncSimPeer`` on a `TCPConnection` (the other side of a TLS connection): one task streams the stream, another
/// reads what the simulated connection writes.
final class ConnectionAsyncSimPeer: AsyncSimPeer, Sendable {
    private struct State {
        var sent = 0
        var stopRequested = false
        var receiving = true
        var resume: CheckedContinuation<Void, Never>?
    }

    let connection: TCPConnection
    let stream: SimulatedStream
    let record = LockedBox(AsyncSimPeerRecord())
    private let state = LockedBox(State())
    private let senderStopped = Latch<Int>()
    private let receiverStopped = Latch<Void>()

    init(connection: TCPConnection, stream: SimulatedStream) {
        self.connection = connection
        self.stream = stream
    }

    func start(seed: UInt64) {
        Task { await send(seed: seed) }
        Task { await receive() }
    }

    private func send(seed: UInt64) async {
        var random = SeededGenerator(seed: seed)
        var offset = 0
        var full = false
        while !state.withLock({ $0.stopRequested }) {
            // After a write that found the window full, single bytes until one goes through: the queue stays short.
            let size =
                full
                ? 1
                : random.chance(0.7)
                    ? Int.random(in: 1...512, using: &random) : Int.random(in: 1...70_000, using: &random)
            do {
                // A write that times out still goes out: the short timeout only lets the sender notice a stop.
                let chunk = ByteBuffer(bytes: stream.bytes(offset..<offset + size))
                try await connection.write(chunk, timeout: .milliseconds(20))
                full = false
            } catch let error as GCDAsyncSocketError where error.code == .writeTimeout {
                full = true
            } catch {
                break
            }
            offset += size
            state.withLock { $0.sent = offset }
        }
        senderStopped.set(state.withLock { $0.sent })
    }

    private func receive() async {
        while true {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.receiving { return true }
                    state.resume = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            do {
                guard let bytes = try await connection.readAvailable() else {
                    record.withLock { $0.end = $0.end ?? .endOfStream }
                    break
                }
                bytes.withUnsafeReadableBytes { raw in record.withLock { $0.parser.feed(raw) } }
            } catch {
                record.withLock { $0.end = $0.end ?? .error("\(error)") }
                break
            }
        }
        receiverStopped.set(())
    }

    func stopSending() async throws -> Int {
        state.withLock { $0.stopRequested = true }
        return try await senderStopped.wait(timeout: .seconds(10))
    }

    func finish(from offset: Int, tail: Int, reset: Bool) async throws {
        _ = try await senderStopped.wait(timeout: .seconds(10))
        if tail > 0 { try await connection.write(ByteBuffer(bytes: stream.bytes(offset..<offset + tail))) }
        if reset {
            try await connection.close()
        } else {
            try await connection.halfClose()
        }
    }

    func setReceiving(_ receiving: Bool) {
        let resume = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.receiving = receiving
            defer { state.resume = nil }
            return receiving ? state.resume : nil
        }
        resume?.resume()
    }

    func receiverEnded() async throws {
        try await receiverStopped.wait(timeout: .seconds(20))
    }

    func close() async throws {
        state.withLock { $0.stopRequested = true }
        setReceiving(true)
        try? await connection.close()
        _ = try await senderStopped.wait(timeout: .seconds(10))
        try await receiverStopped.wait(timeout: .seconds(10))
    }
}
