import Foundation
import TetherConcurrency

/// The RunLoop-era faces' delivery: a FIFO of callbacks performed on one run loop, in its modes, in the order they
/// were posted, and only while that run loop runs in one of those modes.
///
/// Events come from the engine's event loops; ``post(_:)`` appends and, when no drain is pending, hands a drain to
/// the run loop through ``RunLoopWaker`` (which wakes it if it waits). The drain runs every callback handed to that
/// run loop by then, and whatever is posted while it runs. A socket without a run loop yet (an accepted socket before
/// `onSocket(_:wantsRunLoopForNewSocket:)` answered) keeps its callbacks until it has one. After ``move(to:)``,
/// callbacks posted before the move still run on the old run loop; later ones on the new. A change of modes moves the
/// callbacks not yet run to the new modes.
///
/// The mailbox holds no timer and nothing on the run loop holds it: a drain handed over holds it weakly, so a socket
/// released with callbacks pending (its run loop stopped, say) is freed with them.
final class RunLoopMailbox: Sendable {
    /// The callbacks handed to one run loop and not yet run.
    private struct HandOver {
        var handed: [UncheckedSendableBox<() -> Void>] = []
        /// The drain token of the last hand-over to this run loop.
        var token: UInt64 = 0
    }

    private struct State {
        // Sendable: the run loop is only compared by identity and handed to ``RunLoopWaker`` off its own thread.
        var runLoop: UncheckedSendableBox<RunLoop>?
        var modes: [RunLoop.Mode]
        /// Callbacks not yet handed to a run loop (posted since the last drain was scheduled, or before any run loop).
        var pending: [UncheckedSendableBox<() -> Void>] = []
        var isScheduled = false
        /// Identifies the drain in charge; a move or a new schedule retires the previous one.
        var drainToken: UInt64 = 0
        /// What each run loop this mailbox delivered on has been handed, by the run loop's identity.
        var handOvers: [ObjectIdentifier: HandOver] = [:]
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
        let wake: (RunLoop, [RunLoop.Mode])? = state.withLock { s in
            guard !s.isScheduled, !s.pending.isEmpty, let runLoop = s.runLoop else { return nil }
            s.isScheduled = true
            s.drainToken &+= 1
            let key = ObjectIdentifier(runLoop.value)
            s.handOvers[key, default: HandOver()].handed += s.pending
            s.handOvers[key]?.token = s.drainToken
            s.pending = []
            return (runLoop.value, s.modes)
        }
        guard let (runLoop, modes) = wake else { return }
        let key = ObjectIdentifier(runLoop)
        RunLoopWaker.shared.perform(on: runLoop, modes: modes) { [weak self] in self?.drain(key) }
    }

    /// On the run loop `key`: runs the callbacks handed to it, then whatever was posted meanwhile, until a move hands
    /// the mailbox to another run loop.
    private func drain(_ key: ObjectIdentifier) {
        let taken: ([UncheckedSendableBox<() -> Void>], UInt64)? = state.withLock { s in
            guard let handOver = s.handOvers[key], !handOver.handed.isEmpty else { return nil }
            s.handOvers[key]?.handed = []
            return (handOver.handed, handOver.token)
        }
        guard let (batch, token) = taken else { return }
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
