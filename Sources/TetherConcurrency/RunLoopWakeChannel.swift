import Foundation

/// The way to one run loop in one set of modes: work handed over from any thread runs on that run loop, in those
/// modes, in the order it was handed over, and a run loop that waits is woken for it.
///
/// A wake costs one write at most: the first hand-over after the run loop took the waiting work signals it, later
/// ones join the same wake. On Linux the signal is an `eventfd` that a run-loop source of the channel watches (see
/// ``RunLoopFileSource``). The source is added on the run loop's own thread: the channel's first wake comes by a
/// repeating `Timer` whose fire date is moved to now, which adds the source and signals it; where no source can be
/// made (and on other platforms) the timer goes on waking the run loop and runs the work itself. Work that the
/// source brings ends a `run(mode:before:)` pass, as an input source's does. Work handed over while the run loop runs the channel's work waits for the next wake,
/// so that work that hands over more cannot keep the run loop from its other sources.
///
/// Channels are made and kept by ``RunLoopWaker``; hold one for as long as the run loop and modes stay the same.
// Sendable: the run loop is only compared by identity off its thread; the timer's fire date is thread-safe
// (CFRunLoopTimerSetNextFireDate) and its block runs on its run loop only; everything else is behind `state`'s lock.
package final class RunLoopWakeChannel: @unchecked Sendable {
    /// One piece of work waiting for the run loop.
    private enum Work {
        case block(() -> Void)
        case target(WeakTarget, token: UInt64)
    }

    /// A target held weakly: one released while its wake waits is simply skipped.
    private struct WeakTarget {
        weak var value: (any RunLoopWakeTarget)?
    }

    private struct State {
        var waiting: [Work] = []
        /// An emptied array with the capacity of an earlier batch, so that a batch does not allocate.
        var spare: [Work] = []
        /// A wake is signalled and the run loop has not taken the waiting work yet.
        var isSignalled = false
        /// The timer is on the run loop.
        var isTimerAdded = false
        /// The source tried to be made (on the run loop's thread), and what it gave.
        var isSourceTried = false
        #if os(Linux)
        var source: RunLoopFileSource?
        #endif
        /// The channel was retired (its run loop is gone): nothing is signalled any more.
        var isRetired = false
    }

    let modes: [RunLoop.Mode]
    private let runLoopIdentity: ObjectIdentifier
    private weak var runLoop: RunLoop?
    private let timer: Timer
    private let state = LockedBox(State())

    /// A channel whose timer calls `onTimer` (which finds the channel again: swift-corelibs-foundation never frees a
    /// block timer or its block, so the block must not hold the channel).
    init(runLoop: RunLoop, modes: [RunLoop.Mode], onTimer: @escaping @Sendable () -> Void) {
        self.modes = modes
        self.runLoop = runLoop
        self.runLoopIdentity = ObjectIdentifier(runLoop)
        self.timer = Timer(fire: .distantFuture, interval: 1e9, repeats: true) { _ in onTimer() }
    }

    /// Whether the run loop still exists.
    var isAlive: Bool { runLoop != nil }

    /// Runs `block` on the run loop the next time it runs in one of the modes, after the work handed over before.
    package func perform(_ block: @escaping () -> Void) {
        hand(.block(block))
    }

    /// Calls `target.runLoopWake(token:)` on the run loop the next time it runs in one of the modes, after the work
    /// handed over before, unless the target was released by then. Allocates nothing in the steady state.
    package func wake(_ target: any RunLoopWakeTarget, token: UInt64) {
        hand(.target(WeakTarget(value: target), token: token))
    }

    private enum Signal {
        case none
        case timer(addFirst: Bool)
    }

    private func hand(_ work: Work) {
        let signal: Signal = state.withLock { s in
            s.waiting.append(work)
            guard !s.isSignalled, !s.isRetired else { return .none }
            s.isSignalled = true
            #if os(Linux)
            if let source = s.source {
                // Under the lock: a retired channel's descriptor is closed (and its number may be reused).
                source.signal()
                return .none
            }
            #endif
            defer { s.isTimerAdded = true }
            return .timer(addFirst: !s.isTimerAdded)
        }
        guard case .timer(let addFirst) = signal else { return }
        if addFirst, let runLoop {
            for mode in modes { runLoop.add(timer, forMode: mode) }
        }
        timer.fireDate = Date()
    }

    /// On the run loop, from the timer: the first wake. On Linux it adds the channel's source to the run loop and
    /// signals it, so that this wake too is served as an input source's (it ends a `run(mode:before:)` pass, as every
    /// later wake does); where no source can be made, the work runs now.
    func timerFired() {
        #if os(Linux)
        if let source = installSourceIfNeeded() {
            state.withLock { s in
                guard !s.isRetired else { return }
                s.isSignalled = true
                source.signal()
            }
            return
        }
        #endif
        fire()
    }

    /// On the run loop: runs the work waiting.
    private func fire() {
        var batch: [Work] = state.withLock { s in
            s.isSignalled = false
            let batch = s.waiting
            s.waiting = s.spare
            s.spare = []
            return batch
        }
        for work in batch {
            switch work {
            case .block(let block): block()
            case .target(let target, let token): target.value?.runLoopWake(token: token)
            }
        }
        batch.removeAll(keepingCapacity: true)
        state.withLock { s in
            if s.spare.capacity < batch.capacity { s.spare = batch }
        }
    }

    #if os(Linux)
    /// On the run loop: the channel's eventfd source, made the first time; nil when none can be made.
    private func installSourceIfNeeded() -> RunLoopFileSource? {
        let tried: (Bool, RunLoopFileSource?) = state.withLock { s in
            defer { s.isSourceTried = true }
            return (s.isSourceTried || s.isRetired, s.source)
        }
        if tried.0 { return tried.1 }
        let source = RunLoopFileSource.install(modes: modes) { [weak self] in self?.fire() }
        guard let source else { return nil }
        let retired = state.withLock { s in
            if !s.isRetired { s.source = source }
            return s.isRetired
        }
        if retired {
            source.invalidate()
            return nil
        }
        return source
    }
    #endif

    /// The run loop is gone: the source (if any) is removed and its descriptor closed; nothing is signalled again.
    func retire() {
        #if os(Linux)
        let source: RunLoopFileSource? = state.withLock { s in
            s.isRetired = true
            defer { s.source = nil }
            return s.source
        }
        source?.invalidate()
        #else
        state.withLock { $0.isRetired = true }
        #endif
    }

    /// Whether the channel's run loop is `runLoop`.
    func belongs(to runLoop: RunLoop) -> Bool {
        ObjectIdentifier(runLoop) == runLoopIdentity && self.runLoop === runLoop
    }

    /// Whether the channel wakes its run loop through its source (for tests).
    package var usesSource: Bool {
        #if os(Linux)
        state.withLock { $0.source != nil }
        #else
        false
        #endif
    }
}
