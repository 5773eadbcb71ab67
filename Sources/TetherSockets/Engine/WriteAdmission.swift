import NIOConcurrencyHelpers
import NIOCore
import TetherConcurrency

/// The async face's write window: how many bytes its writes may have queued, not yet handed to the kernel, before a
/// write waits (NIOAsyncChannel's writer works the same way, on the channel's writability).
///
/// A write returns as soon as its bytes are queued while fewer than ``limit`` bytes wait ahead of it. While there is
/// room and nothing else waits, a writing task does not even visit the event loop: its buffer joins an inbox under
/// this lock, and one event-loop task hands the inbox to the engine. Everything else (a full window, a pending TLS
/// upgrade, a closed connection) takes the slow path through the engine, which keeps every write in order.
final class WriteAdmission: Sendable {
    /// Bytes that may wait ahead of a write that returns at once. Measured on TLS bulk: a 256 KiB window woke the
    /// writing task every two or three 64 KiB writes, and on two cores its thread competed with the event loop's
    /// encryption (0.69–0.79× raw NIOSSL); 1 MiB gave 0.76–0.92×, 4 MiB (woken about once per 32 writes)
    /// 0.94–1.10×. The bytes are the caller's buffers, held until sent.
    static let limit = 4 * 1024 * 1024
    /// A write that had to wait returns once fewer than this many bytes are ahead of it, so that the task then
    /// finds room for several writes instead of waiting again at once (NIO's writability has the same hysteresis).
    static let resumeBelow = limit / 2

    private struct State {
        /// Bytes accepted or waiting, not yet handed to the kernel (the inbox included).
        var queued = 0
        var inbox: [ByteBuffer] = []
        var drainScheduled = false
        /// Writes on the slow path that have not yet been accepted: later writes must queue behind them.
        var slowWrites = 0
        /// A `startTLS` is in progress: writes go through the engine, behind its marker.
        var upgrading = false
        /// The connection ended (or is closing): the error the next operation gets.
        var closedError: GCDAsyncSocketError?
    }

    private let state = LockedBox(State())

    /// Fast path: queues `buffer` and returns true, or false when the write must go through the engine. When it
    /// returns true with `schedulesDrain`, the caller must hand the inbox to the engine on the event loop.
    func admit(_ buffer: ByteBuffer) -> (admitted: Bool, schedulesDrain: Bool) {
        self.state.withLock { state in
            guard state.closedError == nil, !state.upgrading, state.slowWrites == 0, state.queued < Self.limit else {
                return (false, false)
            }
            state.queued += buffer.readableBytes
            state.inbox.append(buffer)
            if state.drainScheduled { return (true, false) }
            state.drainScheduled = true
            return (true, true)
        }
    }

    /// Event loop: the writes admitted so far, in order.
    func takeInbox() -> [ByteBuffer] {
        self.state.withLock { state in
            state.drainScheduled = false
            defer { state.inbox = [] }
            return state.inbox
        }
    }

    /// A slow-path write is on its way to the engine; later writes queue behind it until it is accepted.
    func beginSlowWrite() {
        self.state.withLock { $0.slowWrites += 1 }
    }

    /// The engine queued a slow-path write's bytes (accepted at once or waiting).
    func enqueued(_ count: Int) {
        self.state.withLock { $0.queued += count }
    }

    /// A slow-path write was accepted or failed.
    func endSlowWrite() {
        self.state.withLock { $0.slowWrites -= 1 }
    }

    /// `count` bytes reached the kernel (or were dropped with the connection).
    func written(_ count: Int) {
        self.state.withLock { $0.queued -= count }
    }

    func setUpgrading(_ upgrading: Bool) {
        self.state.withLock { $0.upgrading = upgrading }
    }

    /// The connection ended or is closing: every later write takes the slow path and gets `error` there.
    func close(_ error: GCDAsyncSocketError) {
        self.state.withLock { state in
            if state.closedError == nil { state.closedError = error }
        }
    }
}
