import Logging
import TetherConcurrency
import TetherStore

import struct Foundation.UUID

/// Pushes what a change feed reports to a server's subscribers, while the server serves at least one listener.
///
/// The first listener served subscribes (and waits until the feed listens); the others share that subscription, so
/// that a server serving two listeners pushes each change once. When the feed fails or ends, every subscriber is
/// closed (it may have missed changes) and the feed is subscribed again, once a second, until the last listener's
/// serving ends. A connection subscribes through ``subscribe(_:destination:source:outbox:timeout:)``, which holds it
/// until the feed listens: no subscriber is added while the feed is down, so none misses a change silently.
final class NotesChangeRelay: Sendable {
    typealias Subscribe = @Sendable () async throws -> AsyncThrowingStream<RecordChange<Note>, any Error>

    private struct State {
        var users = 0
        var task: Task<Void, Never>?
        /// The first subscription under way: joiners that arrive meanwhile wait for it instead of subscribing again.
        var starting: Task<Void, any Error>?
        /// Whether the feed listens now: subscribers are added only then.
        var isListening = false
        /// The subscriptions held until the feed listens again.
        var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]

        mutating func takeWaiting() -> [CheckedContinuation<Void, Never>] {
            defer { waiting = [:] }
            return Array(waiting.values)
        }
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

    /// Starts pushing, or joins the pushing already under way; returns once the feed listens. Joiners that arrive
    /// while the first subscription is under way wait for that one: the feed is subscribed to once.
    /// - Throws: the feed's error when it cannot be subscribed to (nothing is joined then).
    func join() async throws {
        let start = state.withLock { state -> Task<Void, any Error>? in
            state.users += 1
            if state.task != nil { return nil }
            if let starting = state.starting { return starting }
            let starting = Task { try await self.start() }
            state.starting = starting
            return starting
        }
        guard let start else { return }
        do {
            try await start.value
        } catch {
            leave()
            throw error
        }
    }

    /// Subscribes to the feed for the first joiners, and starts pushing what it reports.
    private func start() async throws {
        let first: AsyncThrowingStream<RecordChange<Note>, any Error>
        do {
            first = try await subscribe()
        } catch {
            state.withLock { $0.starting = nil }
            throw error
        }
        listening()
        state.withLock { state in
            state.starting = nil
            state.task = Task { await self.run(first) }
        }
    }

    /// The joiners that have not left.
    var userCount: Int { state.withLock { $0.users } }

    /// Leaves; the last one to leave stops the pushing.
    func leave() {
        let (task, waiting) = state.withLock { state -> (Task<Void, Never>?, [CheckedContinuation<Void, Never>]) in
            state.users -= 1
            guard state.users == 0 else { return (nil, []) }
            defer { state.task = nil }
            state.isListening = false
            return (state.task, state.takeWaiting())
        }
        task?.cancel()
        for waiter in waiting { waiter.resume() }
    }

    /// Adds connection `id` to the subscribers once the feed listens, waiting at most `timeout` for it.
    /// - Returns: whether the connection is subscribed.
    func subscribe(
        _ id: UInt64,
        destination: UInt16,
        source: UInt16,
        outbox: NotesOutbox,
        timeout: Duration
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let added = state.withLock { state -> Bool in
                // Under the relay's lock, as the feed's failure closes every subscriber: none is added in between.
                guard state.isListening else { return false }
                hub.subscribe(id, destination: destination, source: source, outbox: outbox)
                return true
            }
            if added { return true }
            if ContinuousClock.now >= deadline { return false }
            await waitForListening(until: deadline)
        }
    }

    /// Returns when the feed listens again, or at `deadline`.
    private func waitForListening(until deadline: ContinuousClock.Instant) async {
        let ticket = UUID()
        // The deadline's timer, cancelled once the wait ends (the feed may listen long before it).
        let timer = LockedBox<Task<Void, Never>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isWaiting = state.withLock { state -> Bool in
                guard !state.isListening else { return false }
                state.waiting[ticket] = continuation
                return true
            }
            guard isWaiting else { return continuation.resume() }
            let task = Task {
                try? await Task.sleep(until: deadline)
                self.state.withLock { $0.waiting.removeValue(forKey: ticket) }?.resume()
            }
            timer.withLock { $0 = task }
        }
        timer.withLock { $0 }?.cancel()
    }

    /// The feed listens: held subscriptions go on.
    private func listening() {
        subscribed.yield()
        let waiting = state.withLock { state in
            state.isListening = true
            return state.takeWaiting()
        }
        for waiter in waiting { waiter.resume() }
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
                    listening()
                }
                for try await change in current { hub.publish(NoteChange(change)) }
                if Task.isCancelled { return }
                logger.warning("notes change feed ended; closing the subscribed connections")
            } catch {
                if Task.isCancelled { return }
                logger.warning("notes change feed failed: \(error); closing the subscribed connections")
            }
            changes = nil
            // The subscribers may have missed changes: they learn it from their connection's end. New ones wait.
            state.withLock { state in
                state.isListening = false
                hub.closeAll()
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
