import DequeModule
import NIOCore
import TetherConcurrency
import TetherCore

/// The frames waiting to be written to one connection, replies and pushed changes in one order, bounded in bytes.
///
/// Replies wait for room: while ``highWater`` bytes or more wait, the connection's reader stops (a client that sends
/// requests without reading their replies stops being read). Pushed changes never wait: a subscriber that lets more
/// than ``limit`` bytes wait is cut off (the outbox ends, and the connection closes after the frames it holds).
final class NotesOutbox: Sendable {
    /// The bytes waiting above which a reply waits for the writer.
    static let highWater = 1 << 20
    /// The bytes waiting past which a pushed change ends the outbox.
    static let limit = 4 << 20

    private struct State {
        var frames: Deque<STXFrame> = []
        var bytes = 0
        var peakBytes = 0
        var isFinished = false
        var consumer: CheckedContinuation<STXFrame?, Never>?
        var producers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedBox(State())

    /// The bytes a frame occupies: its payload and the frame's 8 bytes around it.
    static func size(of frame: STXFrame) -> Int { frame.payload.readableBytes + 8 }

    /// The bytes waiting (for tests).
    var waitingBytes: Int { state.withLock { $0.bytes } }

    /// The most bytes that ever waited.
    var peakBytes: Int { state.withLock { $0.peakBytes } }

    /// Queues a pushed change; past ``limit`` bytes waiting, the outbox ends instead.
    func send(_ frame: STXFrame) {
        let (consumer, producers) = state.withLock {
            state -> (CheckedContinuation<STXFrame?, Never>?, [CheckedContinuation<Void, Never>]) in
            guard !state.isFinished else { return (nil, []) }
            if state.bytes + Self.size(of: frame) > Self.limit {
                state.isFinished = true
                defer { state.producers = [] }
                return (nil, state.producers)
            }
            return (Self.enqueue(frame, &state), [])
        }
        consumer?.resume(returning: frame)
        for producer in producers { producer.resume() }
    }

    /// Queues a reply, first waiting while ``highWater`` bytes or more wait; returns at once when the outbox ended.
    func reply(_ frame: STXFrame) async {
        while true {
            let outcome = state.withLock {
                state -> (enqueued: Bool, consumer: CheckedContinuation<STXFrame?, Never>?) in
                if state.isFinished { return (true, nil) }
                guard state.bytes < Self.highWater else { return (false, nil) }
                return (true, Self.enqueue(frame, &state))
            }
            if outcome.enqueued {
                outcome.consumer?.resume(returning: frame)
                return
            }
            await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isFinished || state.bytes < Self.highWater { return true }
                    state.producers.append(producer)
                    return false
                }
                if resumeNow { producer.resume() }
            }
        }
    }

    /// The next frame to write, waiting for one; nil once the outbox ended and every frame it held was taken.
    func next() async -> STXFrame? {
        await withCheckedContinuation { (consumer: CheckedContinuation<STXFrame?, Never>) in
            let (frame, producers, isWaiting) = state.withLock {
                state -> (STXFrame?, [CheckedContinuation<Void, Never>], Bool) in
                if let frame = state.frames.popFirst() {
                    state.bytes -= Self.size(of: frame)
                    guard state.bytes < Self.highWater else { return (frame, [], false) }
                    defer { state.producers = [] }
                    return (frame, state.producers, false)
                }
                if state.isFinished { return (nil, [], false) }
                state.consumer = consumer
                return (nil, [], true)
            }
            for producer in producers { producer.resume() }
            if !isWaiting { consumer.resume(returning: frame) }
        }
    }

    /// Ends the outbox after the frames already queued; waiting replies return.
    func finish() {
        let (consumer, producers) = state.withLock {
            state -> (CheckedContinuation<STXFrame?, Never>?, [CheckedContinuation<Void, Never>]) in
            state.isFinished = true
            defer {
                state.consumer = nil
                state.producers = []
            }
            return (state.frames.isEmpty ? state.consumer : nil, state.producers)
        }
        consumer?.resume(returning: nil)
        for producer in producers { producer.resume() }
    }

    /// Appends `frame`, or hands it to a waiting consumer (returned, to resume outside the lock).
    private static func enqueue(_ frame: STXFrame, _ state: inout State) -> CheckedContinuation<STXFrame?, Never>? {
        if let consumer = state.consumer {
            state.consumer = nil
            return consumer
        }
        state.frames.append(frame)
        state.bytes += size(of: frame)
        state.peakBytes = max(state.peakBytes, state.bytes)
        return nil
    }
}
