import Foundation
import Logging
import Testing
import TetherConcurrency
import TetherCore
import TetherStore

@testable import TetherNotes

/// The relay subscribes to a change feed once, however many connections join at the same moment, and stops when the
/// last one leaves.
@Suite("NotesChangeRelay: one feed subscription for every joiner", .timeLimit(.minutes(1)))
struct NotesChangeRelayTests {
    typealias Feed = AsyncThrowingStream<RecordChange<Note>, any Error>

    /// A feed whose subscriptions are counted, and held until the test opens the gate.
    final class ScriptedFeed: Sendable {
        let calls = LockedBox(0)
        let (called, calledContinuation) = AsyncStream.makeStream(of: Int.self)
        let (gate, gateContinuation) = AsyncStream.makeStream(of: Void.self)
        let (feed, feedContinuation) = Feed.makeStream()
        let (ended, endedContinuation) = AsyncStream.makeStream(of: Void.self)
        /// How many subscriptions fail before one succeeds.
        let failures: LockedBox<Int>

        init(failures: Int = 0) {
            self.failures = LockedBox(failures)
            let ended = endedContinuation
            feedContinuation.onTermination = { _ in ended.yield() }
        }

        func subscribe() async throws -> Feed {
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            calledContinuation.yield(call)
            var gate = self.gate.makeAsyncIterator()
            _ = await gate.next()
            let fails = failures.withLock { left -> Bool in
                left -= 1
                return left >= 0
            }
            if fails { throw NotesError(code: .storeFailure, message: "the feed is down") }
            return feed
        }
    }

    func relay(over feed: ScriptedFeed) -> NotesChangeRelay {
        NotesChangeRelay(
            subscribe: { try await feed.subscribe() },
            hub: NotesChangeHub(),
            logger: Logger(label: "test")
        )
    }

    /// Returns once `relay` counts `users` joiners (each join counts itself before it subscribes or waits).
    func waitFor(_ users: Int, in relay: NotesChangeRelay) async {
        while relay.userCount < users { await Task.yield() }
    }

    @Test("two joins racing before the feed listens subscribe once, share its changes; the last leave ends it")
    func racingJoinsSubscribeOnce() async throws {
        let feed = ScriptedFeed()
        let relay = relay(over: feed)
        var called = feed.called.makeAsyncIterator()
        let first = Task { try await relay.join() }
        #expect(await called.next() == 1)
        let second = Task { try await relay.join() }
        await waitFor(2, in: relay)
        feed.gateContinuation.yield()
        try await first.value
        try await second.value
        #expect(feed.calls.withLock { $0 } == 1)
        // The one subscription is the one pushed from.
        let outbox = NotesOutbox()
        #expect(await relay.subscribe(1, destination: 9, source: 1, outbox: outbox, timeout: .seconds(10)))
        let note = Note(content: "pushed once")
        feed.feedContinuation.yield(.inserted(note))
        let frame = try #require(await outbox.next())
        #expect(try NotesWireFormat.decode(frame.payload).message == .changed(.added(note)))
        relay.leave()
        relay.leave()
        var ended = feed.ended.makeAsyncIterator()
        _ = await ended.next()
        #expect(relay.userCount == 0)
    }

    @Test("when the first subscription fails every waiting joiner fails, nothing stays joined, and the next subscribes")
    func aFailedStartLeavesNothingJoined() async throws {
        let feed = ScriptedFeed(failures: 1)
        let relay = relay(over: feed)
        var called = feed.called.makeAsyncIterator()
        let first = Task { try await relay.join() }
        #expect(await called.next() == 1)
        let second = Task { try await relay.join() }
        await waitFor(2, in: relay)
        feed.gateContinuation.yield()
        await #expect(throws: NotesError.self) { try await first.value }
        await #expect(throws: NotesError.self) { try await second.value }
        #expect(relay.userCount == 0)
        let third = Task { try await relay.join() }
        #expect(await called.next() == 2)
        feed.gateContinuation.yield()
        try await third.value
        #expect(relay.userCount == 1)
        relay.leave()
    }
}
