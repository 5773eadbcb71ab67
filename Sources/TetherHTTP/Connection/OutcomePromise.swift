import TetherConcurrency

/// A one-shot value that an async caller waits for.
final class OutcomePromise: Sendable {
    private struct State {
        var outcome: LoadOutcome?
        var waiter: CheckedContinuation<LoadOutcome, Never>?
    }

    private let state = LockedBox(State())

    func fulfil(_ outcome: LoadOutcome) {
        let waiter = self.state.withLock { state -> CheckedContinuation<LoadOutcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    func value() async -> LoadOutcome {
        // A load run inline has ended by now: taking its outcome without a continuation saves the task a trip
        // through its executor.
        if let ready = self.state.withLock({ $0.outcome }) { return ready }
        return await withCheckedContinuation { continuation in
            let ready = self.state.withLock { state -> LoadOutcome? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
