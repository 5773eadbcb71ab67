import TetherConcurrency

/// Bounds the body bytes handed to the delivery target but not yet consumed by the delegate.
///
/// A load waits while ``limit`` bytes or more are outstanding, and resumes once fewer than ``resumeBelow`` are: with
/// a delegate slower than the network, the load then adds several chunks per wake-up instead of one chunk per chunk
/// consumed (each wake-up is a thread hop).
final class FlowWindow: Sendable {
    private struct State {
        var outstanding = 0
        var waiter: CheckedContinuation<Void, Never>?
        /// The bytes of the waiting load's chunk, counted in `outstanding` already.
        var waiterCount = 0
        var isClosed = false
    }

    private let limit: Int
    private let resumeBelow: Int
    private let state = LockedBox(State())

    init(limit: Int, resumeBelow: Int? = nil) {
        self.limit = limit
        self.resumeBelow = resumeBelow ?? limit / 2
    }

    /// Bytes handed over and not yet released.
    var outstanding: Int { self.state.withLock { $0.outstanding } }

    /// Adds `count` bytes, first waiting while the window is full (no suspension while it is not).
    func reserve(_ count: Int) async {
        let admitted = self.state.withLock { state -> Bool in
            guard state.isClosed || state.outstanding < self.limit else { return false }
            state.outstanding += count
            return true
        }
        if admitted { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let mustWait = self.state.withLock { state -> Bool in
                state.outstanding += count
                if state.isClosed || state.outstanding - count < self.resumeBelow { return false }
                state.waiter = continuation
                state.waiterCount = count
                return true
            }
            if !mustWait { continuation.resume() }
        }
    }

    func release(_ count: Int) {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.outstanding -= count
            guard state.waiter != nil, state.outstanding - state.waiterCount < self.resumeBelow else { return nil }
            defer {
                state.waiter = nil
                state.waiterCount = 0
            }
            return state.waiter
        }
        waiter?.resume()
    }

    func close() {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.isClosed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
