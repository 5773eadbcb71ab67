import TetherConcurrency

/// One writer at a time, in the order they asked: a server on its own store runs each change and its publication
/// behind it, so that the changes are pushed in the order the store committed them.
///
/// Waiting takes no thread: a writer that finds the gate taken is resumed when the one before it leaves.
final class NotesWriteGate: Sendable {
    private struct State {
        var isTaken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var head = 0
    }

    private let state = LockedBox(State())

    /// Runs `body` once every writer that asked before has left.
    func run<T>(_ body: () async -> T) async -> T {
        await enter()
        defer { leave() }
        return await body()
    }

    private func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let entered = state.withLock { state -> Bool in
                guard state.isTaken else {
                    state.isTaken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if entered { continuation.resume() }
        }
    }

    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiting.count else {
                state.isTaken = false
                state.waiting.removeAll()
                state.head = 0
                return nil
            }
            defer { state.head += 1 }
            // The gate passes straight to the next writer: it stays taken.
            return state.waiting[state.head]
        }
        next?.resume()
    }
}
