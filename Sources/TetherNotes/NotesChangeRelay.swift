import Logging
import TetherConcurrency
import TetherStore

/// Pushes what a change feed reports to a server's subscribers, while the server serves at least one listener.
///
/// The first listener served subscribes (and waits until the feed listens); the others share that subscription, so
/// that a server serving two listeners pushes each change once. When the feed fails or ends, every subscriber is
/// closed (it may have missed changes) and the feed is subscribed again, once a second, until the last listener's
/// serving ends.
final class NotesChangeRelay: Sendable {
    typealias Subscribe = @Sendable () async throws -> AsyncThrowingStream<RecordChange<Note>, any Error>

    private struct State {
        var users = 0
        var task: Task<Void, Never>?
    }

    private let state = LockedBox(State())
    private let subscribe: Subscribe
    private let hub: NotesChangeHub
    private let logger: Logger
    /// One element each time the feed is subscribed to and listening (the first time, and after each failure):
    /// what a test waits for instead of watching the database. The newest few are kept until read.
    let subscriptions: AsyncStream<Void>
    private let subscribed: AsyncStream<Void>.Continuation

    init(subscribe: @escaping Subscribe, hub: NotesChangeHub, logger: Logger) {
        self.subscribe = subscribe
        self.hub = hub
        self.logger = logger
        (self.subscriptions, self.subscribed) = AsyncStream.makeStream(
            of: Void.self,
            bufferingPolicy: .bufferingNewest(8)
        )
    }

    /// Starts pushing, or joins the pushing already under way; returns once the feed listens.
    /// - Throws: the feed's error when it cannot be subscribed to (nothing is joined then).
    func join() async throws {
        let joined = state.withLock { state -> Bool in
            guard state.task != nil else { return false }
            state.users += 1
            return true
        }
        if joined { return }
        let first = try await subscribe()
        subscribed.yield()
        state.withLock { state in
            state.users += 1
            if state.task == nil { state.task = Task { await self.run(first) } }
        }
    }

    /// Leaves; the last one to leave stops the pushing.
    func leave() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.users -= 1
            guard state.users == 0 else { return nil }
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }

    private func run(_ first: AsyncThrowingStream<RecordChange<Note>, any Error>) async {
        var changes: AsyncThrowingStream<RecordChange<Note>, any Error>? = first
        while !Task.isCancelled {
            do {
                let current: AsyncThrowingStream<RecordChange<Note>, any Error>
                if let changes {
                    current = changes
                } else {
                    current = try await subscribe()
                    subscribed.yield()
                }
                for try await change in current { hub.publish(NoteChange(change)) }
                if Task.isCancelled { return }
                logger.warning("notes change feed ended; closing the subscribed connections")
            } catch {
                if Task.isCancelled { return }
                logger.warning("notes change feed failed: \(error); closing the subscribed connections")
            }
            changes = nil
            // The subscribers may have missed changes: they learn it from their connection's end.
            hub.closeAll()
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
