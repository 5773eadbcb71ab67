import DequeModule
import Foundation
import TetherConcurrency

/// The RunLoop-era faces' delivery: a FIFO of callbacks performed on one run loop, in its modes, in the order they
/// were posted, one at a time, and only while that run loop runs in one of those modes.
///
/// Events come from the engine's event loops; ``post(_:)`` appends and, when no drain is scheduled, hands a drain to
/// the run loop through the ``RunLoopWakeChannel`` of its run loop and modes (which wakes it if it waits, with one
/// `eventfd` write on Linux, and allocates nothing for it). The drain runs the callbacks one by one, those
/// posted while it runs included, until none is left. A socket without a run loop yet (an accepted socket before
/// `onSocket(_:wantsRunLoopForNewSocket:)` answered) keeps its callbacks until it has one.
///
/// Every callback not yet run follows the mailbox's current run loop and modes: after ``move(to:first:)`` or a change
/// of ``modes`` (from a callback too), the next callback, and every later one, runs on the new run loop in the new
/// modes; the drain in charge before stops after the callback it is running, and the new one starts only then, so
/// that two callbacks never run at once.
///
/// The mailbox holds no timer and nothing on the run loop holds it: a drain handed over holds it weakly, so a socket
/// released with callbacks pending (its run loop stopped, say) is freed with them.
final class RunLoopMailbox: RunLoopWakeTarget {
    private struct State {
        // Sendable: the run loop is only compared by identity and handed to ``RunLoopWaker`` off its own thread.
        var runLoop: UncheckedSendableBox<RunLoop>?
        var modes: [RunLoop.Mode]
        /// Callbacks not yet run, in order.
        var queue = Deque<UncheckedSendableBox<() -> Void>>()
        /// A drain is handed to the current run loop in the current modes (or one is running).
        var isScheduled = false
        /// A callback is running: a drain handed over now would start before it returns, so the running drain hands
        /// over the next one when it ends.
        var isRunning = false
        /// Identifies the drain in charge; a move or a change of modes retires it.
        var drainToken: UInt64 = 0
        /// The way to the run loop in the modes, found on the first drain handed over since they changed.
        var channel: RunLoopWakeChannel?

        /// The drain in charge stops after its current callback; a new one is handed over.
        mutating func retireDrain() {
            drainToken &+= 1
            isScheduled = false
            channel = nil
        }
    }

    private let state: LockedBox<State>

    /// A mailbox delivering on `runLoop` (nil: held until ``move(to:first:)``) in `modes`.
    init(runLoop: RunLoop?, modes: [RunLoop.Mode] = [.default]) {
        self.state = LockedBox(State(runLoop: runLoop.map { UncheckedSendableBox($0) }, modes: modes))
    }

    /// The run loop callbacks go to, if any.
    var runLoop: RunLoop? {
        state.withLock { $0.runLoop?.value }
    }

    /// The modes callbacks run in. A change applies to every callback not yet run.
    var modes: [RunLoop.Mode] {
        get { state.withLock { $0.modes } }
        set {
            state.withLock { s in
                guard s.modes != newValue else { return }
                s.modes = newValue
                s.retireDrain()
            }
            scheduleIfNeeded()
        }
    }

    /// How many callbacks wait to run (for tests).
    var waitingCount: Int {
        state.withLock { $0.queue.count }
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
        state.withLock { $0.queue.append(boxed) }
        scheduleIfNeeded()
    }

    /// Delivers every callback not yet run, and every later one, on `runLoop`. `first` runs before every callback
    /// waiting here (an accepted socket's `didConnectToHost` before its events).
    func move(to runLoop: RunLoop, first: (() -> Void)? = nil) {
        // Sendable: the callback runs on the mailbox's run loop thread only, after this hand-over.
        let boxed = first.map { UncheckedSendableBox($0) }
        state.withLock { s in
            if let boxed { s.queue.prepend(boxed) }
            guard s.runLoop?.value !== runLoop else { return }
            s.runLoop = UncheckedSendableBox(runLoop)
            s.retireDrain()
        }
        scheduleIfNeeded()
    }

    private func scheduleIfNeeded() {
        let wake: (RunLoop, [RunLoop.Mode], RunLoopWakeChannel?, UInt64)? = state.withLock { s in
            guard !s.isScheduled, !s.isRunning, !s.queue.isEmpty, let runLoop = s.runLoop else { return nil }
            s.isScheduled = true
            s.drainToken &+= 1
            return (runLoop.value, s.modes, s.channel, s.drainToken)
        }
        guard let (runLoop, modes, known, token) = wake else { return }
        let channel = known ?? RunLoopWaker.shared.channel(for: runLoop, modes: modes)
        if known == nil {
            state.withLock { s in
                if s.channel == nil, s.runLoop?.value === runLoop, s.modes == modes { s.channel = channel }
            }
        }
        channel.wake(self, token: token)
    }

    func runLoopWake(token: UInt64) {
        drain(token)
    }

    /// On the run loop: runs the callbacks one at a time while this drain is in charge and some are left.
    private func drain(_ token: UInt64) {
        while true {
            let next: UncheckedSendableBox<() -> Void>? = state.withLock { s in
                guard s.drainToken == token, !s.isRunning else { return nil }
                guard !s.queue.isEmpty else {
                    s.isScheduled = false
                    return nil
                }
                s.isRunning = true
                return s.queue.removeFirst()
            }
            guard let next else { return }
            next.value()
            let stillInCharge = state.withLock { s in
                s.isRunning = false
                return s.drainToken == token
            }
            guard stillInCharge else {
                // A move or a change of modes retired this drain during the callback: the next one starts now.
                scheduleIfNeeded()
                return
            }
        }
    }
}
