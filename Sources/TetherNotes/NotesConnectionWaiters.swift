import TetherConcurrency

/// Callers waiting for a server's count of open connections to reach a value: the server tells it each time the count
/// changes, so that a waiter (a test that must know a closed connection's place is free) waits for the event instead
/// of polling.
final class NotesConnectionWaiters: Sendable {
    private struct Waiter: Sendable {
        let condition: @Sendable (Int) -> Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var waiters: [UInt64: Waiter] = [:]
        var lastID: UInt64 = 0
    }

    private let state = LockedBox(State())

    /// After the count changed: resumes every waiter whose condition `count()` now meets. The count is read under this
    /// object's lock, so a waiter that registers meanwhile sees either the old count (and is resumed here) or the new.
    func countChanged(_ count: () -> Int) {
        let ready = state.withLock { state -> [Waiter] in
            let now = count()
            let met = state.waiters.filter { $0.value.condition(now) }
            for id in met.keys { state.waiters[id] = nil }
            return Array(met.values)
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `condition` holds for the count (at once when it already does); throws `CancellationError` when
    /// the task is cancelled first.
    func wait(until condition: @escaping @Sendable (Int) -> Bool, count: @escaping @Sendable () -> Int) async throws {
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if condition(count()) { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
