import Foundation
import TetherConcurrency
import TetherTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// ``AsyncSimPeer`` on a plain blocking POSIX socket, independent of the engine under test: one thread sends the
/// stream, another receives.
final class RawAsyncSimPeer: AsyncSimPeer, @unchecked Sendable {
    // Sendable: the mutable state is behind locks (`state`, `record`, `receiving`); `fd` is closed once.
    private struct State {
        var sent = 0
        var stopRequested = false
        var closed = false
    }

    let fd: Int32
    let stream: SimulatedStream
    let record = LockedBox(AsyncSimPeerRecord())
    private let state = LockedBox(State())
    private let receiving = NSCondition()
    private var receivingOn = true
    private let senderStopped = Latch<Int>()
    private let receiverStopped = Latch<Void>()

    init(fd: Int32, stream: SimulatedStream) {
        self.fd = fd
        self.stream = stream
        // Sends give up every 20 ms so that the sender notices a stop while the connection does not read.
        // (A `timeval` laid out by hand, two `long`s on Linux: its imported initializers are not visible in every
        // compilation batch of this module.)
        let timeout: [Int] = [0, 20_000]
        _ = timeout.withUnsafeBytes { setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, $0.baseAddress, socklen_t($0.count)) }
    }

    func start(seed: UInt64) {
        Thread { [self] in send(seed: seed) }.start()
        Thread { [self] in receive() }.start()
    }

    /// Sends `bytes`; false when the socket failed or a stop was asked (`stoppable`).
    private func sendAll(_ bytes: [UInt8], stoppable: Bool, sent: (Int) -> Void) -> Bool {
        var done = 0
        while done < bytes.count {
            if stoppable && state.withLock({ $0.stopRequested }) { return false }
            let n = bytes[done...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                done += n
                sent(done)
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                continue
            } else {
                return false
            }
        }
        return true
    }

    private func send(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var offset = 0
        while !state.withLock({ $0.stopRequested }) {
            let size =
                random.chance(0.7)
                ? Int.random(in: 1...512, using: &random) : Int.random(in: 1...70_000, using: &random)
            let start = offset
            let complete = sendAll(stream.bytes(start..<start + size), stoppable: true) { done in
                state.withLock { $0.sent = start + done }
            }
            guard complete else { break }
            offset += size
            if random.chance(0.05) { usleep(SeededGenerator.pause(UInt32.random(in: 0...2_000, using: &random))) }
        }
        senderStopped.set(state.withLock { $0.sent })
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            receiving.lock()
            while !receivingOn { receiving.wait() }
            receiving.unlock()
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let end: AsyncSimPeerRecord.End = n == 0 ? .endOfStream : .error("errno \(errno)")
                record.withLock { $0.end = $0.end ?? end }
                break
            }
            buffer.withUnsafeBytes { bytes in
                record.withLock { $0.parser.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<n])) }
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
        let bytes = stream.bytes(offset..<offset + tail)
        try await onThread { [self] in
            _ = sendAll(bytes, stoppable: false) { _ in }
            if reset {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                // Wakes the receiver without sending anything; the close below then sends the reset.
                record.withLock { $0.end = $0.end ?? .error("the peer reset") }
                shutdown(fd, Int32(SHUT_RD))
            } else {
                shutdown(fd, Int32(SHUT_WR))
            }
        }
        if reset { try await close() }
    }

    func setReceiving(_ receiving: Bool) {
        self.receiving.lock()
        receivingOn = receiving
        self.receiving.broadcast()
        self.receiving.unlock()
    }

    func receiverEnded() async throws {
        try await receiverStopped.wait(timeout: .seconds(20))
    }

    func close() async throws {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            state.stopRequested = true
            return !state.closed
        }
        guard first else { return }
        setReceiving(true)
        // A reset's linger is set: this shutdown then sends nothing more than the close does.
        shutdown(fd, Int32(SHUT_RD))
        if record.withLock({ $0.end != .error("the peer reset") }) { shutdown(fd, Int32(SHUT_RDWR)) }
        _ = try await senderStopped.wait(timeout: .seconds(10))
        try await receiverStopped.wait(timeout: .seconds(10))
        _ = Glibc.close(fd)
    }
}
