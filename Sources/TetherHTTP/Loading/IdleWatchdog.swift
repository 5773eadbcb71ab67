import NIOCore
import TetherConcurrency

/// Fails a load when no byte moved for `timeout` (NSURLConnection's `timeoutInterval` is an idle timeout).
///
/// One scheduled callback per load at a time, on an event loop of the load's group (the loop's own scheduled
/// callbacks: no future, promise or closure is made for them): activity only records the time (a lock, no timer),
/// and the callback, when it fires, either fails the load or schedules itself for the rest of the idle time. Paused
/// while the load waits for its delegate, so a slow delegate is not a silent server. ``stop()`` cancels the callback
/// and lets go of `onFire` (which may hold the load).
final class IdleWatchdog: NIOScheduledCallbackHandler, Sendable {
    private struct State {
        var lastActivity: NIODeadline
        var pauseCount = 0
        var onFire: (@Sendable () -> Void)?
        var scheduled: NIOScheduledCallback?
    }

    private let timeout: TimeAmount
    private let eventLoop: any EventLoop
    private let state: LockedBox<State>

    init?(timeoutInterval: Double, eventLoop: any EventLoop, onFire: @escaping @Sendable () -> Void) {
        guard timeoutInterval > 0, timeoutInterval.isFinite else { return nil }
        self.timeout = .nanoseconds(Int64(min(timeoutInterval, 365 * 86_400) * 1e9))
        self.eventLoop = eventLoop
        self.state = LockedBox(State(lastActivity: .now(), onFire: onFire))
    }

    func start() {
        let now = NIODeadline.now()
        state.withLock { $0.lastActivity = now }
        schedule(at: now + timeout)
    }

    func touch() {
        state.withLock { $0.lastActivity = .now() }
    }

    func pause() {
        state.withLock { $0.pauseCount += 1 }
    }

    func resume() {
        state.withLock {
            $0.pauseCount -= 1
            $0.lastActivity = .now()
        }
    }

    func stop() {
        let scheduled = state.withLock { state -> NIOScheduledCallback? in
            state.onFire = nil
            defer { state.scheduled = nil }
            return state.scheduled
        }
        scheduled?.cancel()
    }

    private func schedule(at deadline: NIODeadline) {
        // Throws only when the loop is shutting down: then no timer runs, and the load's engine fails on its own.
        let callback = try? eventLoop.scheduleCallback(at: deadline, handler: self)
        let isStopped = state.withLock { state -> Bool in
            if state.onFire != nil { state.scheduled = callback }
            return state.onFire == nil
        }
        if isStopped { callback?.cancel() }
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        self.fired()
    }

    /// The idle time may be up: fail the load, or wait for the rest of it.
    private func fired() {
        let now = NIODeadline.now()
        enum Next {
            case nothing
            case fire(@Sendable () -> Void)
            case wait(until: NIODeadline)
        }
        let next = state.withLock { state -> Next in
            guard let onFire = state.onFire else { return .nothing }
            state.scheduled = nil
            if state.pauseCount > 0 { return .wait(until: now + timeout) }
            let due = state.lastActivity + timeout
            guard due <= now else { return .wait(until: due) }
            state.onFire = nil
            return .fire(onFire)
        }
        switch next {
        case .nothing: return
        case .fire(let onFire): onFire()
        case .wait(let deadline): schedule(at: deadline)
        }
    }
}
