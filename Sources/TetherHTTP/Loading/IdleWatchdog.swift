import Foundation
import NIOCore

/// Fails a load when no byte moved for `timeout` (NSURLConnection's `timeoutInterval` is an idle timeout).
///
/// Paused while the load waits for its delegate, so a slow delegate is not a silent server.
final class IdleWatchdog: Sendable {

    private struct State {
        var lastActivity: NIODeadline
        var pauseCount = 0
        var scheduled: Scheduled<Void>?
        var isStopped = false
    }

    private let timeout: TimeAmount
    private let eventLoop: any EventLoop
    private let onFire: @Sendable () -> Void
    private let state: NSLockedBox<State>

    init?(timeoutInterval: Double, eventLoop: any EventLoop, onFire: @escaping @Sendable () -> Void) {
        guard timeoutInterval > 0, timeoutInterval.isFinite else { return nil }
        self.timeout = .nanoseconds(Int64(min(timeoutInterval, 365 * 86_400) * 1e9))
        self.eventLoop = eventLoop
        self.onFire = onFire
        self.state = NSLockedBox(State(lastActivity: .now()))
    }

    func start() {
        self.touch()
        self.schedule(at: .now() + self.timeout)
    }

    func touch() {
        self.state.withLock { $0.lastActivity = .now() }
    }

    func pause() {
        self.state.withLock { $0.pauseCount += 1 }
    }

    func resume() {
        self.state.withLock {
            $0.pauseCount -= 1
            $0.lastActivity = .now()
        }
    }

    func stop() {
        let scheduled = self.state.withLock { state -> Scheduled<Void>? in
            state.isStopped = true
            defer { state.scheduled = nil }
            return state.scheduled
        }
        scheduled?.cancel()
    }

    private func schedule(at deadline: NIODeadline) {
        self.state.withLock { state in
            guard !state.isStopped else { return }
            state.scheduled = self.eventLoop.scheduleTask(deadline: deadline) { self.check() }
        }
    }

    private enum Outcome {
        case reschedule(NIODeadline)
        case fire
        case nothing
    }

    private func check() {
        let now = NIODeadline.now()
        let outcome: Outcome = self.state.withLock { state in
            if state.isStopped { return .nothing }
            if state.pauseCount > 0 { return .reschedule(now + self.timeout) }
            let due = state.lastActivity + self.timeout
            if due <= now {
                state.isStopped = true
                state.scheduled = nil
                return .fire
            }
            return .reschedule(due)
        }
        switch outcome {
        case .reschedule(let deadline): self.schedule(at: deadline)
        case .fire: self.onFire()
        case .nothing: break
        }
    }
}
