import NIOCore
import TetherConcurrency

/// Fails a load when no byte moved for `timeout` (NSURLConnection's `timeoutInterval` is an idle timeout).
///
/// One NIO scheduled task per load at a time, on an event loop of the load's group: activity only records the time
/// (a lock, no timer), and the task, when it fires, either fails the load or schedules itself for the rest of the
/// idle time. Paused while the load waits for its delegate, so a slow delegate is not a silent server.
final class IdleWatchdog: Sendable {
    private struct State {
        var lastActivity: NIODeadline
        var pauseCount = 0
        var isStopped = false
        var scheduled: Scheduled<Void>?
    }

    private let timeout: TimeAmount
    private let eventLoop: any EventLoop
    private let onFire: @Sendable () -> Void
    private let state: LockedBox<State>

    init?(timeoutInterval: Double, eventLoop: any EventLoop, onFire: @escaping @Sendable () -> Void) {
        guard timeoutInterval > 0, timeoutInterval.isFinite else { return nil }
        self.timeout = .nanoseconds(Int64(min(timeoutInterval, 365 * 86_400) * 1e9))
        self.eventLoop = eventLoop
        self.onFire = onFire
        self.state = LockedBox(State(lastActivity: .now()))
    }

    func start() {
        let deadline = NIODeadline.now() + timeout
        state.withLock { $0.lastActivity = .now() }
        schedule(at: deadline)
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
        let scheduled = state.withLock { state -> Scheduled<Void>? in
            state.isStopped = true
            defer { state.scheduled = nil }
            return state.scheduled
        }
        scheduled?.cancel()
    }

    private func schedule(at deadline: NIODeadline) {
        let task = eventLoop.scheduleTask(deadline: deadline) { [weak self] () -> Void in self?.fired() }
        let isStopped = state.withLock { state -> Bool in
            if !state.isStopped { state.scheduled = task }
            return state.isStopped
        }
        if isStopped { task.cancel() }
    }

    /// The idle time may be up: fail the load, or wait for the rest of it.
    private func fired() {
        let now = NIODeadline.now()
        enum Next {
            case nothing
            case fire
            case wait(until: NIODeadline)
        }
        let next = state.withLock { state -> Next in
            if state.isStopped { return .nothing }
            if state.pauseCount > 0 { return .wait(until: now + timeout) }
            let due = state.lastActivity + timeout
            guard due <= now else { return .wait(until: due) }
            state.isStopped = true
            state.scheduled = nil
            return .fire
        }
        switch next {
        case .nothing: return
        case .fire: onFire()
        case .wait(let deadline): schedule(at: deadline)
        }
    }
}
