import DequeModule
import TetherConcurrency

/// Keeps the changes pushed to one space's subscribers in the order its store committed them, and costs nothing
/// while nobody is subscribed.
///
/// While no connection of the space is subscribed, writers run at once, side by side, as any callers of the store
/// would: nobody is pushed their changes, so nobody sees an order. While one is subscribed (or subscribing), writers
/// take turns in the order they asked, each committing and publishing its change before the next begins. A
/// subscription is added between two turns, once every writer that ran side by side has left: a subscriber is pushed
/// every change committed after it was added, in commit order.
///
/// Waiting takes no thread: a writer that finds the gate taken is resumed when the one before it leaves.
final class NotesWriteGate: Sendable {
    private struct State {
        /// Subscriptions in place or being added: while there is one, writers take turns.
        var watchers = 0
        /// Writers running side by side (they entered while nobody watched).
        var sideBySide = 0
        /// A writer, or a subscription being added, has the turn.
        var isTaken = false
        /// Writers and subscriptions waiting for the turn, in the order they asked.
        var waiting: Deque<CheckedContinuation<Void, Never>> = []
        /// Subscriptions waiting for the writers running side by side to leave.
        var draining: [CheckedContinuation<Void, Never>] = []
    }

    private enum Entry {
        case sideBySide
        case hasTurn
        case waits
    }

    private let state = LockedBox(State())

    /// Writers running side by side now (for tests).
    var sideBySideCount: Int { state.withLock { $0.sideBySide } }

    /// Writers and subscriptions waiting for their turn (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Subscriptions waiting for the writers running side by side to leave (for tests).
    var drainingCount: Int { state.withLock { $0.draining.count } }

    /// Whether writers take turns: a subscription is in place or being added.
    var takesTurns: Bool { state.withLock { $0.watchers > 0 } }

    /// Runs `body` (a change committed, then published): at once while nobody is subscribed; otherwise once every
    /// writer that asked before has left.
    func run<T>(_ body: () async -> T) async -> T {
        let entry = state.withLock { state -> Entry in
            if state.watchers == 0 {
                state.sideBySide += 1
                return .sideBySide
            }
            guard !state.isTaken else { return .waits }
            state.isTaken = true
            return .hasTurn
        }
        if entry == .sideBySide {
            let result = await body()
            leaveSideBySide()
            return result
        }
        if entry == .waits { await waitForTurn() }
        let result = await body()
        passTurn()
        return result
    }

    /// Adds a subscription: from now on writers take turns; once the writers that ran side by side have left, and
    /// between two turns, `add` runs (it puts the subscriber where the next change is published).
    func watch(_ add: () -> Void) async {
        state.withLock { $0.watchers += 1 }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let drained = state.withLock { state -> Bool in
                guard state.sideBySide > 0 else { return true }
                state.draining.append(continuation)
                return false
            }
            if drained { continuation.resume() }
        }
        await waitForTurn()
        add()
        passTurn()
    }

    /// A subscription added through ``watch(_:)`` ended; with the last one, writers run side by side again.
    func unwatch() {
        state.withLock { state in
            precondition(state.watchers > 0, "unwatch without watch")
            state.watchers -= 1
        }
    }

    private func waitForTurn() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasTurn = state.withLock { state -> Bool in
                guard state.isTaken else {
                    state.isTaken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if hasTurn { continuation.resume() }
        }
    }

    private func passTurn() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            // The turn passes straight to the next in line: the gate stays taken.
            guard let next = state.waiting.popFirst() else {
                state.isTaken = false
                return nil
            }
            return next
        }
        next?.resume()
    }

    private func leaveSideBySide() {
        let drained = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.sideBySide -= 1
            guard state.sideBySide == 0 else { return [] }
            defer { state.draining = [] }
            return state.draining
        }
        for subscription in drained { subscription.resume() }
    }
}
