import Foundation
import TetherConcurrency

/// The RunLoop-era faces' delivery: a FIFO of callbacks performed on one run loop, in its modes, in the order they
/// were posted, and only while that run loop runs in one of those modes.
///
/// Events come from the engine's event loops; ``post(_:)`` appends and, when no drain is pending, wakes the run loop
/// through a repeating `Timer` that the mailbox keeps registered there in its modes and re-arms by setting its fire
/// date (a timer re-armed or added wakes a waiting run loop; `RunLoop.perform` alone may not). The timer's block runs
/// every callback handed to that run loop by then, and whatever is posted while it runs. A socket without a run loop yet (an
/// accepted socket before `onSocket(_:wantsRunLoopForNewSocket:)` answered) keeps its callbacks until it has one.
/// After ``move(to:)``, callbacks posted before the move still run on the old run loop; later ones on the new.
final class RunLoopMailbox: Sendable {
    /// The wake timer of one run loop, and the callbacks handed to that run loop and not yet run.
    private struct Waker {
        // Sendable: a timer's fire date and invalidation are thread-safe (CFRunLoopTimer); its block runs on its run
        // loop only.
        var timer: UncheckedSendableBox<Timer>
        var modes: [RunLoop.Mode]
        var handed: [UncheckedSendableBox<() -> Void>] = []
        /// The drain token of the last hand-over to this run loop.
        var token: UInt64 = 0
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
        /// One wake timer per run loop this mailbox has delivered on, by the run loop's identity.
        var wakers: [ObjectIdentifier: Waker] = [:]
        /// Batches waiting for their run loop's new wake timer to be registered, by the run loop's identity.
        var handOvers: [ObjectIdentifier: ([UncheckedSendableBox<() -> Void>], UInt64)] = [:]
    }

    private let state: LockedBox<State>

    /// A mailbox delivering on `runLoop` (nil: held until ``move(to:)``) in `modes`.
    init(runLoop: RunLoop?, modes: [RunLoop.Mode] = [.default]) {
        self.state = LockedBox(State(runLoop: runLoop.map { UncheckedSendableBox($0) }, modes: modes))
    }

    deinit {
        for waker in state.withLock({ $0.wakers.values }) { waker.timer.value.invalidate() }
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
        enum Wake {
            case existing(Timer)
            case new(RunLoop, [RunLoop.Mode], old: Timer?)
        }
        let wake: Wake? = state.withLock { s in
            guard !s.isScheduled, !s.pending.isEmpty, let runLoop = s.runLoop else { return nil }
            s.isScheduled = true
            s.drainToken &+= 1
            let key = ObjectIdentifier(runLoop.value)
            let batch = s.pending
            s.pending = []
            if var waker = s.wakers[key], waker.modes == s.modes {
                waker.handed += batch
                waker.token = s.drainToken
                s.wakers[key] = waker
                return .existing(waker.timer.value)
            }
            let old = s.wakers[key]
            s.wakers[key] = nil
            // The new timer is registered outside the lock; until then the batch waits here.
            s.handOvers[key] = ((old?.handed ?? []) + batch, s.drainToken)
            return .new(runLoop.value, s.modes, old: old?.timer.value)
        }
        switch wake {
        case .none:
            return
        case .existing(let timer):
            timer.fireDate = Date()
        case .new(let runLoop, let modes, let old):
            old?.invalidate()
            let key = ObjectIdentifier(runLoop)
            let timer = Timer(fire: .distantFuture, interval: 1e9, repeats: true) { [weak self] _ in
                self?.drain(key)
            }
            for mode in modes { runLoop.add(timer, forMode: mode) }
            state.withLock { s in
                let (handed, token) = s.handOvers.removeValue(forKey: key) ?? ([], s.drainToken)
                s.wakers[key] = Waker(timer: UncheckedSendableBox(timer), modes: modes, handed: handed, token: token)
            }
            timer.fireDate = Date()
        }
    }

    /// On the run loop `key`: runs the callbacks handed to it, then whatever was posted meanwhile, until a move hands
    /// the mailbox to another run loop.
    private func drain(_ key: ObjectIdentifier) {
        let taken: ([UncheckedSendableBox<() -> Void>], UInt64)? = state.withLock { s in
            guard var waker = s.wakers[key], !waker.handed.isEmpty else { return nil }
            defer {
                waker.handed = []
                s.wakers[key] = waker
            }
            return (waker.handed, waker.token)
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
