import Dispatch
import Foundation
import TetherConcurrency

/// A thread that runs its run loop for the whole run: the home of the RunLoop-era sockets.
final class RunLoopHost: @unchecked Sendable {
    // Sendable: `runLoop` is set once before `init` returns and then only handed to `RunLoopWaker`.
    private(set) var runLoop: RunLoop!

    init() {
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            runLoop = RunLoop.current
            // A source that never fires keeps the run loop waiting instead of returning at once.
            let keepAlive = Timer(timeInterval: 1e9, repeats: true) { _ in }
            RunLoop.current.add(keepAlive, forMode: .default)
            ready.signal()
            while true { _ = RunLoop.current.run(mode: .default, before: .distantFuture) }
        }
        thread.name = "tether.allocations.run-loop"
        thread.start()
        ready.wait()
    }

    /// Runs `body` on the run loop's thread and returns when it did.
    func perform(_ body: @escaping @Sendable () -> Void) {
        RunLoopWaker.shared.perform(on: runLoop, modes: [.default], body)
    }
}
