import NIOConcurrencyHelpers

/// The peers' count of connections they saw close, and tasks waiting for it to reach a number: an operation that
/// closes a connection ends when the peer's end has closed too, so that no round counts another's teardown.
final class ConnectionTally: Sendable {
    private struct State {
        var closed = 0
        var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = NIOLockedValueBox(State())

    /// The connections closed so far.
    var closed: Int { state.withLockedValue { $0.closed } }

    /// One more connection closed.
    func connectionClosed() {
        let ready = state.withLockedValue { state in
            state.closed += 1
            return Self.takeReady(&state)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `target` connections have closed. Always through a continuation, whether or not the count is
    /// already there, so that every call allocates the same.
    func waitUntilClosed(_ target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLockedValue { state in
                state.waiters.append((target, continuation))
                return Self.takeReady(&state)
            }
            for continuation in ready { continuation.resume() }
        }
    }

    private static func takeReady(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard state.waiters.contains(where: { $0.target <= state.closed }) else { return [] }
        let ready = state.waiters.filter { $0.target <= state.closed }.map(\.continuation)
        state.waiters.removeAll(where: { $0.target <= state.closed })
        return ready
    }
}
