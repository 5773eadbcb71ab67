import Foundation
import TetherConcurrency
import TetherTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The far end of a simulated connection: a plain blocking POSIX socket, independent of the engine under test. One
/// thread sends the simulated stream in chunks and pauses drawn from a seed (all of it, or `limit` bytes and then
/// the end of its side); another receives what the socket writes and checks every byte.
final class StreamingPeer: @unchecked Sendable {
    struct State {
        var sent = 0
        var stopRequested = false
        var received = 0
        /// The offset of the first byte received that is not the socket's write stream's.
        var firstWrongByte: Int?
        /// How the socket's side ended: 0 for its orderly close (FIN), else the receive's errno (a reset: a socket
        /// closed with bytes it never read resets the connection, and what it wrote last may be lost then).
        var endErrno: Int32?

        /// `endErrno` of a TLS stream that ended without the socket's close_notify and without an error the peer
        /// could see: a reset whose errno the kernel reported elsewhere (what the socket wrote last may be lost).
        static let raggedEnd: Int32 = -2
        /// `endErrno` of a receive that returned 0 after a reset. The kernel reports a reset's error once, to
        /// whichever call comes first: when the sender's `send` took it, the receiver's next `recv` returns 0 as if
        /// the socket had sent a FIN, and the bytes the reset discarded never come. Told apart by the sender's failed
        /// send, or by the connection being closed already (`TCP_CLOSE`) while the peer has not ended its side: a FIN
        /// alone leaves it in `CLOSE_WAIT` then. (After the peer's own FIN, the socket's FIN closes it too.)
        static let resetSeenBySender: Int32 = -3
        /// The sender's `send` failed (a reset, or the connection closed under it).
        var sendFailed = false
        /// The sender ended its side (`shutdown(SHUT_WR)` succeeded).
        var endedItsSide = false
        /// When the socket's side ended, and how the peer saw it (the TLS peer: which event came first).
        var endedAt: ContinuousClock.Instant?
        var endNote = ""
    }

    let fd: Int32
    let stream: SimulatedStream
    let state = LockedBox(State())
    /// The sender's final count, once it stopped.
    let senderStopped = Latch<Int>()
    /// The receiver's count, once the socket's side ended (or the peer closed).
    let receiverEnded = Latch<Int>()
    private let closed = LockedBox(false)

    init(fd: Int32, stream: SimulatedStream) {
        self.fd = fd
        self.stream = stream
        // Sends give up every 20 ms so that the sender notices a stop while the socket does not read.
        // A `timeval` spelled as its two 64-bit fields (seconds, microseconds): Glibc's `timeval` does not build in
        // an optimized build of this target (its module, SwiftOverlayShims, is not visible: MemberImportVisibility).
        var timeout: (Int, Int) = (0, 20_000)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<(Int, Int)>.size))
    }

    /// Starts both threads; the sender sends `limit` bytes then shuts its side down (nil: until stopped).
    func start(seed: UInt64, limit: Int?) {
        Thread { [self] in send(seed: seed, limit: limit) }.start()
        Thread { [self] in receive() }.start()
    }

    private func send(seed: UInt64, limit: Int?) {
        var random = SeededGenerator(seed: seed)
        var offset = 0
        var chunk: [UInt8] = []
        sending: while limit.map({ offset < $0 }) ?? true {
            let size =
                random.chance(0.7)
                ? Int.random(in: 1...512, using: &random) : Int.random(in: 1...70_000, using: &random)
            let end = limit.map { min(offset + size, $0) } ?? offset + size
            chunk = stream.bytes(offset..<end)
            var done = 0
            while done < chunk.count {
                if state.withLock({ $0.stopRequested }) { break sending }
                let n = chunk[done...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    done += n
                    state.withLock { $0.sent = offset + done }
                } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                    continue
                } else {
                    state.withLock { $0.sendFailed = !$0.stopRequested }
                    break sending
                }
            }
            offset = end
            if random.chance(0.05) { usleep(SeededGenerator.pause(UInt32.random(in: 0...2_000, using: &random))) }
        }
        if limit != nil && !state.withLock({ $0.stopRequested || $0.sendFailed }) {
            let ended = shutdown(fd, Int32(SHUT_WR)) == 0
            state.withLock { $0.endedItsSide = ended }
        }
        senderStopped.set(state.withLock { $0.sent })
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var offset = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let code = n < 0 ? errno : 0
                let closed = n == 0 && Self.isClosed(fd)
                state.withLock { state in
                    let reset = n == 0 && (state.sendFailed || (closed && !state.endedItsSide))
                    state.endErrno = reset ? State.resetSeenBySender : code
                }
                break
            }
            var wrong: Int?
            for index in 0..<n where buffer[index] != SimulatedStream.written(at: offset + index) {
                wrong = offset + index
                break
            }
            offset += n
            state.withLock { state in
                state.received = offset
                if state.firstWrongByte == nil { state.firstWrongByte = wrong }
            }
        }
        receiverEnded.set(offset)
    }

    /// Whether the kernel holds `fd`'s connection as closed (`tcpi_state`, the first byte of `TCP_INFO` (11), is
    /// `TCP_CLOSE` (7)), which after a receive of 0 means a reset ended it.
    private static func isClosed(_ fd: Int32) -> Bool {
        var info = [UInt8](repeating: 0, count: 8)
        var length = socklen_t(info.count)
        let status = info.withUnsafeMutableBytes { getsockopt(fd, Int32(IPPROTO_TCP), 11, $0.baseAddress, &length) }
        return status == 0 && info[0] == 7
    }

    /// Stops the sender; returns how many bytes it sent in all.
    func stopSending() async throws -> Int {
        state.withLock { $0.stopRequested = true }
        return try await senderStopped.wait(timeout: .seconds(10))
    }

    /// Ends both threads and closes the descriptor (once).
    func close() async throws {
        let first = closed.withLock { wasClosed -> Bool in
            defer { wasClosed = true }
            return !wasClosed
        }
        guard first else { return }
        state.withLock { $0.stopRequested = true }
        shutdown(fd, Int32(SHUT_RDWR))
        _ = try await senderStopped.wait(timeout: .seconds(10))
        _ = try await receiverEnded.wait(timeout: .seconds(10))
        _ = Glibc.close(fd)
    }
}
