import Foundation

/// The one thread that starts child processes. Foundation's `Process.run()` gives the launching thread a run loop
/// (an epoll, an eventfd and a timerfd) that it keeps for the thread's life; launching from one thread makes that
/// a fixed cost, paid once before the soak's baseline, instead of one per pool thread that happened to launch.
final class LaunchThread: @unchecked Sendable {
    static let shared = LaunchThread()
    private let condition = NSCondition()
    private var work: [() -> Void] = []

    private init() {
        Thread.detachNewThread { [self] in
            while true {
                condition.lock()
                while work.isEmpty { condition.wait() }
                let next = work.removeFirst()
                condition.unlock()
                next()
            }
        }
    }

    /// Runs `process.run()` on the launch thread; waits at most 30 s for it.
    func launch(_ process: Process) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        condition.lock()
        work.append {
            do { try process.run() } catch { outcome.error = error }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        guard done.wait(timeout: .now() + 30) == .success else { throw StressError("launching a process timed out") }
        if let error = outcome.error { throw error }
    }

    /// The launch's error, written on the launch thread before the semaphore is signalled.
    private final class Outcome: @unchecked Sendable {
        var error: (any Error)?
    }
}
