import Foundation
import NIOConcurrencyHelpers
import TetherSockets
import TetherTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The randomized test's peer: a plain POSIX socket that sends the known stream in random chunks with random
/// pauses (until told to stop), reads everything the socket writes, and ends by keeping the connection open,
/// half-closing or resetting it.
final class AsyncSocketSimPeer: @unchecked Sendable {
    // Sendable: `fd` is immutable; the counters and flags are behind `lock`; each thread owns its generator.
    private let fd: Int32
    private let seed: UInt64
    private let lock = NIOLock()
    private var stopSending = false
    private var stopReading = false
    private var isClosed = false
    private var sentCount = 0
    private var receivedBytes = Data()
    private let senderDone = DispatchSemaphore(value: 0)
    private let readerDone = DispatchSemaphore(value: 0)

    /// How far the sender may get ahead of what the socket's reads took: under the engine's back-pressure
    /// threshold, so that the peer's end of the stream is always seen.
    static let lead = 128 * 1024
    private let consumed: @Sendable () -> Int

    init(fd: Int32, seed: UInt64, consumed: @escaping @Sendable () -> Int) {
        self.fd = fd
        self.seed = seed
        self.consumed = consumed
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        Thread { [self] in send() }.start()
        Thread { [self] in receive() }.start()
    }

    /// The stream's bytes sent so far (all of them once ``stop()`` returned).
    var sent: Int { lock.withLock { sentCount } }
    /// Every byte the socket wrote that arrived.
    var received: Data { lock.withLock { receivedBytes } }

    private func waitFor(_ events: Int16, milliseconds: Int32) {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        _ = poll(&entry, 1, milliseconds)
    }

    private func send() {
        defer { senderDone.signal() }
        var random = SeededGenerator(seed: seed ^ 0x5EED)
        var chunk = [UInt8]()
        while !lock.withLock({ stopSending }) {
            if chunk.isEmpty {
                let start = sent
                if start >= consumed() + Self.lead {
                    usleep(2000)
                    continue
                }
                let size = Int.random(in: 1...(random.chance(0.4) ? 4096 : 64), using: &random)
                chunk = Array(AsyncSocketSimSchedule.stream(start..<start + size, seed: seed))
                // The peer's own rhythm: now and then it waits before its next chunk.
                if random.chance(0.2) { usleep(SeededGenerator.pause(UInt32.random(in: 0...2000, using: &random))) }
            }
            let n = chunk.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                lock.withLock { sentCount += n }
                chunk.removeFirst(n)
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                waitFor(Int16(POLLOUT), milliseconds: 10)
            } else {
                return
            }
        }
    }

    private func receive() {
        defer { readerDone.signal() }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                lock.withLock { receivedBytes.append(contentsOf: buffer[0..<n]) }
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                if lock.withLock({ stopReading }) { return }
                waitFor(Int16(POLLIN), milliseconds: 10)
            } else {
                return
            }
        }
    }

    /// Stops sending and returns once the sender stopped.
    func stop() {
        lock.withLock { stopSending = true }
        senderDone.wait()
    }

    func end(_ ending: AsyncSocketSimSchedule.Ending) {
        switch ending {
        case .keepOpen: break
        case .halfClose: shutdown(fd, Int32(SHUT_WR))
        case .reset:
            // The reader stops first: the descriptor is closed under no thread.
            lock.withLock { stopReading = true }
            readerDone.wait()
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            _ = Glibc.close(fd)
            lock.withLock { isClosed = true }
        }
    }

    /// Waits (up to 10 s) for the socket's end of the stream, then closes the descriptor. False: no end came.
    func finish() -> Bool {
        guard !lock.withLock({ isClosed }) else { return true }
        let ended = readerDone.wait(timeout: .now() + 10) == .success
        if !ended {
            lock.withLock { stopReading = true }
            readerDone.wait()
        }
        _ = Glibc.close(fd)
        return ended
    }
}
