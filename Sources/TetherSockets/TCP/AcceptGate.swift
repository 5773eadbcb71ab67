import NIOCore
import TetherConcurrency

/// A listener's flow control: counts the connections accepted and not yet taken by the consumer, and stops the
/// server channel's reading (accepting) while `limit` of them wait. The kernel's backlog then holds further clients,
/// instead of an unbounded queue of accepted connections growing in memory.
///
/// Accepts are counted on the server channel's loop (``AcceptCounter``), where the pause is applied at once; takes
/// happen on the consumer's task, and a resume is applied by a task on the loop that reads the *latest* state, so
/// that the order of those tasks does not matter. Accepting resumes once the consumer took half of the waiting
/// connections (hysteresis: a consumer at the limit does not toggle reading per connection).
final class AcceptGate: Sendable {
    private struct State {
        var channel: (any Channel)?
        /// Accepted, not yet taken by the consumer nor dropped (a failed TLS handshake).
        var outstanding = 0
        var paused = false
        var pauses = 0
    }

    /// How many accepted connections may wait for the consumer.
    let limit: Int
    private let state = LockedBox(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// The server channel, once bound.
    func attach(_ channel: any Channel) {
        state.withLock { $0.channel = channel }
    }

    /// On the server channel's loop: a connection was accepted. Returns true when accepting must pause now.
    func accepted() -> Bool {
        state.withLock { state in
            state.outstanding += 1
            guard !state.paused, state.outstanding >= limit else { return false }
            state.paused = true
            state.pauses += 1
            return true
        }
    }

    /// The consumer took a connection, or an accepted one will never reach it: resumes accepting when few enough
    /// wait.
    func released() {
        let channel: (any Channel)? = state.withLock { state in
            state.outstanding -= 1
            guard state.paused, state.outstanding <= limit / 2 else { return nil }
            state.paused = false
            return state.channel
        }
        guard let channel else { return }
        channel.eventLoop.execute { [state] in
            let paused = state.withLock { $0.paused }
            channel.setOption(ChannelOptions.autoRead, value: !paused).whenFailure { _ in }
        }
    }

    /// Connections accepted and waiting for the consumer, whether accepting is paused, and how often it paused.
    var snapshot: (outstanding: Int, paused: Bool, pauses: Int) {
        state.withLock { ($0.outstanding, $0.paused, $0.pauses) }
    }
}
