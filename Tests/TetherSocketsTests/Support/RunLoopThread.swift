import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// A thread that runs its `RunLoop` (in `mode`, which a test may change) until stopped: the home of a RunLoop-era
/// socket in tests.
final class RunLoopThread: @unchecked Sendable {
    // Sendable: `runLoop` is only used to add timers (thread-safe) and compared by identity off its thread; the
    // mutable state is behind `lock`.
    private let lock = NIOLock()
    private var _mode: RunLoop.Mode = .default
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)
    private(set) var runLoop: RunLoop!
    private var thread: Thread!

    /// Starts the thread and returns once its run loop exists.
    init(name: String = "run-loop-thread") {
        let ready = DispatchSemaphore(value: 0)
        thread = Thread { [self] in
            runLoop = RunLoop.current
            // A source that never fires keeps the run loop waiting instead of returning at once.
            let keepAlive = Timer(timeInterval: 1e9, repeats: true) { _ in }
            RunLoop.current.add(keepAlive, forMode: .default)
            ready.signal()
            while true {
                let (mode, stop) = lock.withLock { (_mode, stopped) }
                if stop { break }
                RunLoop.current.add(keepAlive, forMode: mode)
                _ = RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: 0.05))
            }
            keepAlive.invalidate()
            done.signal()
        }
        thread.name = name
        thread.start()
        ready.wait()
    }

    /// The mode the thread runs its run loop in from its next pass.
    var mode: RunLoop.Mode {
        get { lock.withLock { _mode } }
        set { lock.withLock { _mode = newValue } }
    }

    /// Runs `body` on the run loop's thread (in the default mode) and returns its result.
    func sync<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let timer = Timer(timeInterval: 0, repeats: false) { _ in
            result.withLockedValue { $0 = Result { try body() } }
            finished.signal()
        }
        runLoop.add(timer, forMode: .common)
        // Never a hang: a run loop stuck in another mode (or stopped) fails the test instead.
        guard finished.wait(timeout: .now() + 30) == .success else { throw RunLoopThreadTimedOut() }
        return try result.withLockedValue { $0! }.get()
    }

    /// Runs `body` on the run loop's thread, asynchronously.
    func perform(_ body: @escaping @Sendable () -> Void) {
        let timer = Timer(timeInterval: 0, repeats: false) { _ in body() }
        runLoop.add(timer, forMode: .common)
    }

    /// Stops the loop and waits for the thread to finish.
    func stop() {
        lock.withLock { stopped = true }
        perform {}
        done.wait()
    }
}

/// `RunLoopThread.sync` waited 30 s for its run loop.
struct RunLoopThreadTimedOut: Error {}
