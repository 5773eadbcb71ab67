import DequeModule
import NIOCore
import TetherConcurrency
import TetherCore

/// The frames on their way to one connection, replies and pushed changes in one order, bounded in bytes.
///
/// One task at a time has the connection's writing turn. A reply that finds nothing queued ahead of it and nobody
/// writing is written at once by the task that made it (the connection's reader), through the outbox's `write`
/// function: no other task is woken for it. Everything else is queued, and the connection's writer task takes it
/// with ``next()`` once the turn is free, in order.
///
/// Replies wait for room: while ``highWater`` bytes or more are queued, the connection's reader stops (a client
/// that sends requests without reading their replies stops being read; a reply written at once waits in the
/// connection's own write window instead, which stops the reader the same way). Pushed changes never wait: a
/// subscriber that lets more than ``limit`` bytes wait is cut off (the outbox ends, and the connection closes after
/// the frames it holds).
final class NotesOutbox: Sendable {
    /// The bytes queued above which a reply waits for the writer.
    static let highWater = 1 << 20
    /// The bytes queued past which a pushed change ends the outbox.
    static let limit = 4 << 20

    /// Writes one frame to the connection; false when the connection failed (the outbox then ends).
    typealias Write = @Sendable (STXFrame) async -> Bool

    /// Who has the writing turn.
    private enum Turn {
        case free
        /// The writer task, with a frame it took from the queue.
        case writer
        /// A reply's own task, writing it at once.
        case replier
    }

    private struct State {
        var frames: Deque<STXFrame> = []
        var bytes = 0
        var peakBytes = 0
        var isFinished = false
        var turn = Turn.free
        var consumer: CheckedContinuation<STXFrame?, Never>?
        var producers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedBox(State())
    private let write: Write?

    /// An outbox whose replies are written at once through `write` when nothing waits ahead of them; without it,
    /// every frame is queued for ``next()``.
    init(write: Write? = nil) {
        self.write = write
    }

    /// The bytes a frame occupies: its payload and the frame's 8 bytes around it.
    static func size(of frame: STXFrame) -> Int { frame.payload.readableBytes + 8 }

    /// The bytes queued (for tests).
    var waitingBytes: Int { state.withLock { $0.bytes } }

    /// The most bytes that were ever queued.
    var peakBytes: Int { state.withLock { $0.peakBytes } }

    /// Queues a pushed change; past ``limit`` bytes queued, the outbox ends instead.
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

    /// Sends a reply: written at once by the calling task when nothing is queued and nobody writes, otherwise queued,
    /// first waiting while ``highWater`` bytes or more are queued. Returns at once when the outbox ended.
    func reply(_ frame: STXFrame) async {
        enum Route {
            case dropped
            case queued(CheckedContinuation<STXFrame?, Never>?)
            case writeNow(Write)
            case full
        }
        while true {
            let route = state.withLock { state -> Route in
                if state.isFinished { return .dropped }
                if let write, state.frames.isEmpty, state.turn == .free {
                    state.turn = .replier
                    return .writeNow(write)
                }
                guard state.bytes < Self.highWater else { return .full }
                return .queued(Self.enqueue(frame, &state))
            }
            switch route {
            case .dropped:
                return
            case .queued(let consumer):
                consumer?.resume(returning: frame)
                return
            case .writeNow(let write):
                let written = await write(frame)
                passTurn(failed: !written)
                return
            case .full:
                await waitForRoom()
            }
        }
    }

    private func waitForRoom() async {
        await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.isFinished || state.bytes < Self.highWater { return true }
                state.producers.append(producer)
                return false
            }
            if resumeNow { producer.resume() }
        }
    }

    /// A reply written at once is out (or its write failed, which ends the outbox): the turn goes to the writer task
    /// when frames were queued meanwhile, or when the outbox ended.
    private func passTurn(failed: Bool) {
        typealias Handoff = (consumer: CheckedContinuation<STXFrame?, Never>, frame: STXFrame?)
        let (handoff, producers) = state.withLock { state -> (Handoff?, [CheckedContinuation<Void, Never>]) in
            state.turn = .free
            if failed { state.isFinished = true }
            var producers: [CheckedContinuation<Void, Never>] = []
            if state.isFinished || state.bytes < Self.highWater { swap(&producers, &state.producers) }
            guard let consumer = state.consumer else { return (nil, producers) }
            if let frame = Self.take(&state) {
                state.consumer = nil
                return ((consumer, frame), producers)
            }
            guard state.isFinished else { return (nil, producers) }
            state.consumer = nil
            return ((consumer, nil), producers)
        }
        if let handoff { handoff.consumer.resume(returning: handoff.frame) }
        for producer in producers { producer.resume() }
    }

    /// The writer task's next frame, waiting for one and for the turn; nil once the outbox ended and every frame it
    /// held was taken.
    func next() async -> STXFrame? {
        await withCheckedContinuation { (consumer: CheckedContinuation<STXFrame?, Never>) in
            let (frame, producers, isWaiting) = state.withLock {
                state -> (STXFrame?, [CheckedContinuation<Void, Never>], Bool) in
                // The frame the writer took last is out: its turn ends here.
                if state.turn == .writer { state.turn = .free }
                if state.turn == .free, let frame = Self.take(&state) {
                    guard state.bytes < Self.highWater else { return (frame, [], false) }
                    defer { state.producers = [] }
                    return (frame, state.producers, false)
                }
                if state.isFinished, state.frames.isEmpty, state.turn == .free { return (nil, [], false) }
                state.consumer = consumer
                return (nil, [], true)
            }
            for producer in producers { producer.resume() }
            if !isWaiting { consumer.resume(returning: frame) }
        }
    }

    /// Ends the outbox after the frames already queued (and a reply being written at once); waiting replies return.
    func finish() {
        let (consumer, producers) = state.withLock {
            state -> (CheckedContinuation<STXFrame?, Never>?, [CheckedContinuation<Void, Never>]) in
            state.isFinished = true
            defer { state.producers = [] }
            // A writer waiting while a reply is written at once is handed the end when that write is out.
            guard state.frames.isEmpty, state.turn == .free else { return (nil, state.producers) }
            defer { state.consumer = nil }
            return (state.consumer, state.producers)
        }
        consumer?.resume(returning: nil)
        for producer in producers { producer.resume() }
    }

    /// Appends `frame`, or hands it to a writer waiting for a free turn (returned, to resume outside the lock).
    private static func enqueue(_ frame: STXFrame, _ state: inout State) -> CheckedContinuation<STXFrame?, Never>? {
        if let consumer = state.consumer, state.turn == .free {
            state.consumer = nil
            state.turn = .writer
            return consumer
        }
        state.frames.append(frame)
        state.bytes += size(of: frame)
        state.peakBytes = max(state.peakBytes, state.bytes)
        return nil
    }

    /// Takes the first queued frame for the writer task, which then has the turn.
    private static func take(_ state: inout State) -> STXFrame? {
        guard let frame = state.frames.popFirst() else { return nil }
        state.bytes -= size(of: frame)
        state.turn = .writer
        return frame
    }
}
