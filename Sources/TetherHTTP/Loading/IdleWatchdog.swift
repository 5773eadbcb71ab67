import Dispatch
import Foundation
import NIOCore
import TetherConcurrency

/// Fails a load when no byte moved for `timeout` (NSURLConnection's `timeoutInterval` is an idle timeout).
///
/// Paused while the load waits for its delegate, so a slow delegate is not a silent server. All watchdogs share
/// one ticker (``WatchdogTicker``), so arming and disarming one costs a lock, not a timer per request.
final class IdleWatchdog: Sendable {
    private struct State {
        var lastActivity: NIODeadline
        var pauseCount = 0
        var isStopped = false
    }

    private let timeout: TimeAmount
    private let onFire: @Sendable () -> Void
    private let state: LockedBox<State>

    init?(timeoutInterval: Double, onFire: @escaping @Sendable () -> Void) {
        guard timeoutInterval > 0, timeoutInterval.isFinite else { return nil }
        self.timeout = .nanoseconds(Int64(min(timeoutInterval, 365 * 86_400) * 1e9))
        self.onFire = onFire
        self.state = LockedBox(State(lastActivity: .now()))
    }

    func start() {
        self.touch()
        WatchdogTicker.shared.register(self)
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
        self.state.withLock { $0.isStopped = true }
        WatchdogTicker.shared.unregister(self)
    }

    /// Called by the ticker: fires (once) when the load has been idle for `timeout`; true when done with it.
    func check(now: NIODeadline) -> Bool {
        let shouldFire: Bool? = self.state.withLock { state in
            if state.isStopped { return nil }
            if state.pauseCount > 0 {
                state.lastActivity = now
                return false
            }
            guard state.lastActivity + self.timeout <= now else { return false }
            state.isStopped = true
            return true
        }
        guard let shouldFire else { return true }
        if shouldFire { self.onFire() }
        return shouldFire
    }
}

/// One timer for every armed ``IdleWatchdog``: ticks every 50 ms while any is armed, stops after 2 s without any.
// Sendable: its state (with the Dispatch timer, whose calls are thread-safe) is in a `LockedBox`, used under its lock.
final class WatchdogTicker: @unchecked Sendable {
    static let shared = WatchdogTicker()

    private struct State {
        var watchdogs: [ObjectIdentifier: IdleWatchdog] = [:]
        var timer: (any DispatchSourceTimer)?
        var idleTicks = 0
    }

    private static let interval = DispatchTimeInterval.milliseconds(50)
    private let state = LockedBox(State())
    private let queue = DispatchQueue(label: "tether.http.idle-timeouts")

    func register(_ watchdog: IdleWatchdog) {
        self.state.withLock { state in
            state.watchdogs[ObjectIdentifier(watchdog)] = watchdog
            state.idleTicks = 0
            guard state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(10))
            timer.setEventHandler { [weak self] in self?.tick() }
            timer.resume()
            state.timer = timer
        }
    }

    func unregister(_ watchdog: IdleWatchdog) {
        self.state.withLock { _ = $0.watchdogs.removeValue(forKey: ObjectIdentifier(watchdog)) }
    }

    private func tick() {
        let now = NIODeadline.now()
        let armed = self.state.withLock { Array($0.watchdogs.values) }
        let done = armed.filter { $0.check(now: now) }
        self.state.withLock { state in
            for watchdog in done { state.watchdogs.removeValue(forKey: ObjectIdentifier(watchdog)) }
            if state.watchdogs.isEmpty {
                state.idleTicks += 1
                if state.idleTicks >= 40 {
                    state.timer?.cancel()
                    state.timer = nil
                    state.idleTicks = 0
                }
            } else {
                state.idleTicks = 0
            }
        }
    }
}
