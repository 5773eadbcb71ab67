import TetherConcurrency

/// A value set once and awaited any number of times (bounded; no sleeps).
final class Latch<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter = 0
    }

    private let state = LockedBox(State())

    /// Sets the value (the first call wins) and wakes every waiter.
    func set(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// The value, if set.
    var value: Value? { state.withLock { $0.value } }

    /// The value, once set; throws ``HandoffTimedOut`` after `timeout`.
    func wait(timeout: Duration = .seconds(10)) async throws -> Value {
        let id = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task { [state] in
            try await Task.sleep(for: timeout)
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: HandoffTimedOut())
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters[id] = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
