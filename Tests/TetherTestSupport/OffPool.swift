import Foundation
import TetherConcurrency

/// Runs blocking work (a child's output read to its end, a blocking socket call, a fixture made with the `openssl`
/// CLI) on a thread of its own, off Swift's cooperative pool.
///
/// The pool has as many threads as cores (two here). Tests run in parallel on it: one test blocking a pool thread
/// halves everyone's progress, and two stall the whole run while the engines' timers keep running.
///
/// The result crosses from the thread to the task through a lock as well as the continuation. The concurrency
/// runtime tells the thread sanitizer nothing when a resume runs ahead of the task's await (the continuation's
/// status flips from pending to resumed, and the await then continues inline with no acquire annotated). Then a
/// class made on the thread (`RawListener.accept()`'s peer) and read by the test afterwards was reported as a data
/// race, now and then, under `scripts/sanitize.sh`. A mutex is a synchronisation the sanitizer sees in every order.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let outcome = LockedBox<Result<T, any Error>?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            let result = Result { try body() }
            outcome.withLock { $0 = result }
            continuation.resume()
        }
    }
    return try outcome.withLock { $0! }.get()
}
