import Foundation
import TetherConcurrency

/// The RunLoop-era faces' delivery: a FIFO of callbacks performed on one run loop, in its modes, in the order they
/// were posted, and only while that run loop runs in one of those modes.
///
/// Events come from the engine's event loops; ``post(_:)`` appends and, when no drain is pending, adds a one-shot
/// `Timer` to the run loop in each mode (adding a timer wakes a waiting run loop; `RunLoop.perform` alone may not).
/// The timer's block runs every callback queued for that run loop by then. A socket without a run loop yet (an
/// accepted socket before `onSocket(_:wantsRunLoopForNewSocket:)` answered) keeps its callbacks until it has one.
/// After ``move(to:)``, callbacks posted before the move still run on the old run loop; later ones on the new.
final class RunLoopMailbox: Sendable {
    private struct Batch {
        var callbacks: [() -> Void] = []
    }

    private struct State {
        // Sendable: RunLoop's timer registration (CFRunLoopAddTimer) is thread-safe; nothing else is used off its
        // own thread.
        var runLoop: UncheckedSendableBox<RunLoop>?
        var modes: [RunLoop.Mode]
        /// Callbacks not yet handed to a run loop (posted since the last drain was scheduled, or before any run loop).
        var pending: [UncheckedSendableBox<() -> Void>] = []
        var isScheduled = false
        /// Identifies the drain in charge; a move or a new schedule retires the previous one.
        var drainToken: UInt64 = 0
    }

    private let state: LockedBox<State>

    /// A mailbox delivering on `runLoop` (nil: held until ``move(to:)``) in `modes`.
    init(runLoop: RunLoop?, modes: [RunLoop.Mode] = [.default]) {
        self.state = LockedBox(State(runLoop: runLoop.map { UncheckedSendableBox($0) }, modes: modes))
    }

    /// The run loop callbacks go to, if any.
    var runLoop: RunLoop? {
        state.withLock { $0.runLoop?.value }
    }

    /// The modes callbacks run in.
    var modes: [RunLoop.Mode] {
        get { state.withLock { $0.modes } }
        set {
            let reschedule = state.withLock { s -> Bool in
                s.modes = newValue
                return !s.pending.isEmpty && !s.isScheduled
            }
            if reschedule { scheduleIfNeeded() }
        }
    }

    /// Whether the calling thread is the one that runs this mailbox's run loop.
    var isOnRunLoopThread: Bool {
        guard let runLoop else { return false }
        return RunLoop.current === runLoop
    }

    /// Appends `callback`; it runs on the run loop after every callback posted before it.
    func post(_ callback: @escaping () -> Void) {
        // Sendable: the callback runs on the mailbox's run loop thread only, after this hand-over.
        let boxed = UncheckedSendableBox(callback)
        state.withLock { $0.pending.append(boxed) }
        scheduleIfNeeded()
    }

    /// Delivers later callbacks on `runLoop`; callbacks already handed to the old run loop stay there. `first`
    /// runs before every callback still waiting here (an accepted socket's `didConnectToHost` before its events).
    func move(to runLoop: RunLoop, first: (() -> Void)? = nil) {
        // Sendable: the callback runs on the mailbox's run loop thread only, after this hand-over.
        let boxed = first.map { UncheckedSendableBox($0) }
        state.withLock { s in
            if let boxed { s.pending.insert(boxed, at: 0) }
            s.runLoop = UncheckedSendableBox(runLoop)
            // A drain scheduled on the old run loop runs what it took then; it takes nothing more.
            s.isScheduled = false
            s.drainToken &+= 1
        }
        scheduleIfNeeded()
    }

    private func scheduleIfNeeded() {
        typealias Target = (UncheckedSendableBox<RunLoop>, [RunLoop.Mode], [UncheckedSendableBox<() -> Void>], UInt64)
        let target: Target? = state.withLock { s in
            guard !s.isScheduled, !s.pending.isEmpty, let runLoop = s.runLoop else { return nil }
            s.isScheduled = true
            s.drainToken &+= 1
            defer { s.pending = [] }
            return (runLoop, s.modes, s.pending, s.drainToken)
        }
        guard let (runLoop, modes, batch, token) = target else { return }
        let timer = Timer(timeInterval: 0, repeats: false) { [self] _ in
            drain(batch, token: token)
        }
        for mode in modes {
            runLoop.value.add(timer, forMode: mode)
        }
    }

    /// On the run loop: runs the batch handed over with this drain, then whatever was posted meanwhile, until a
    /// move hands the mailbox to another run loop.
    private func drain(_ batch: [UncheckedSendableBox<() -> Void>], token: UInt64) {
        var next = batch
        while !next.isEmpty {
            for callback in next { callback.value() }
            next = state.withLock { s in
                guard s.drainToken == token else { return [] }
                defer { s.pending = [] }
                return s.pending
            }
        }
        let stillOurs = state.withLock { s -> Bool in
            guard s.drainToken == token else { return false }
            s.isScheduled = false
            return true
        }
        if stillOurs { scheduleIfNeeded() }
    }
}
