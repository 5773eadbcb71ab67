import TetherConcurrency

/// Suspends the calling task until `start` hands over a result from another thread (a thread of its own, a run
/// loop's), without holding a thread of the cooperative pool meanwhile.
///
/// The result crosses through a lock as well as the continuation. The concurrency runtime tells the thread sanitizer
/// nothing when a resume runs ahead of the task's await (the continuation's status flips from pending to resumed,
/// and the await then continues inline with no acquire annotated). Then an object made on the other thread
/// (`RawListener.accept()`'s peer) and read by the task afterwards was reported as a data race, now and then, under
/// `scripts/sanitize.sh`. A mutex is a synchronisation the sanitizer sees in every order.
public func handOff<T: Sendable>(
    _ start: (_ deliver: @escaping @Sendable (Result<T, any Error>) -> Void) -> Void
) async throws -> T {
    let outcome = LockedBox<Result<T, any Error>?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        start { result in
            outcome.withLock { $0 = result }
            continuation.resume()
        }
    }
    return try outcome.withLock { $0! }.get()
}
