import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TetherConcurrency
import TetherTestSupport

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

    /// Starts the thread and returns once its run loop exists.
    init(name: String = "run-loop-thread") {
        let ready = DispatchSemaphore(value: 0)
        // Not stored: the thread holds this object while it runs, and a stored thread would hold it back for ever.
        let thread = Thread { [self] in
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

    /// Runs `body` on the run loop's thread (in the default mode) and returns its result. The calling task waits
    /// without holding a thread of the cooperative pool: that pool has as many threads as cores, and a test blocked
    /// on one would starve the others (and their sockets' timeouts) on a 2-core machine.
    func sync<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        // Through `handOff`: the thread sanitizer sees every write the block made happen before the caller reads them.
        try await handOff { deliver in
            perform { deliver(Result { try body() }) }
        }
    }

    /// Runs `body` on the run loop's thread, asynchronously, whatever mode it runs in. Through the library's
    /// ``RunLoopWaker``: a `Timer` per call would leak with everything its block holds (swift-corelibs-foundation never
    /// frees a block timer), and LeakSanitizer would report the sockets the tests made.
    func perform(_ body: @escaping @Sendable () -> Void) {
        RunLoopWaker.shared.perform(on: runLoop, modes: [.common], body)
    }

    /// Stops the loop and waits for the thread to finish.
    func stop() {
        lock.withLock { stopped = true }
        perform {}
        done.wait()
    }
}
