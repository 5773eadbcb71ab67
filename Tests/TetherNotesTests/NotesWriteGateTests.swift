import Testing
import TetherConcurrency

@testable import TetherNotes

/// The gate a server's changes to one store pass: side by side while nobody is subscribed, one at a time in the order
/// they asked while someone is, and a subscription added only between turns, after the writers that ran side by side.
@Suite("NotesWriteGate, without I/O", .timeLimit(.minutes(1)))
struct NotesWriteGateTests {
    /// A writer that enters the gate, says so on `entered`, and stays until `release` yields.
    final class HeldWriter: Sendable {
        let entered: AsyncStream<Void>
        let releasing: AsyncStream<Void>.Continuation
        let task: Task<Void, Never>

        init(_ gate: NotesWriteGate, name: String, log: LockedBox<[String]>) {
            let (entered, entering) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            self.entered = entered
            self.releasing = releasing
            task = Task {
                await gate.run {
                    log.withLock { $0.append("\(name) in") }
                    entering.yield()
                    var releases = release.makeAsyncIterator()
                    _ = await releases.next()
                    log.withLock { $0.append("\(name) out") }
                }
            }
        }

        func waitUntilInside() async {
            for await _ in entered { return }
        }

        func leave() async {
            releasing.yield()
            await task.value
        }
    }

    @Test func writersRunSideBySideWhileNobodyIsSubscribed() async {
        let gate = NotesWriteGate()
        let log = LockedBox<[String]>([])
        let first = HeldWriter(gate, name: "first", log: log)
        await first.waitUntilInside()
        // The second enters while the first is still inside: were they taking turns, this would never return.
        let second = HeldWriter(gate, name: "second", log: log)
        await second.waitUntilInside()
        #expect(gate.sideBySideCount == 2)
        await second.leave()
        await first.leave()
        #expect(log.withLock { $0 } == ["first in", "second in", "second out", "first out"])
        #expect(gate.sideBySideCount == 0)
    }

    @Test func whileSomeoneIsSubscribedWritersTakeTurnsInTheOrderTheyAsked() async {
        let gate = NotesWriteGate()
        let log = LockedBox<[String]>([])
        await gate.watch { log.withLock { $0.append("subscribed") } }
        #expect(gate.takesTurns)
        let first = HeldWriter(gate, name: "first", log: log)
        await first.waitUntilInside()
        var waiting: [Task<Void, Never>] = []
        for name in ["second", "third"] {
            waiting.append(Task { await gate.run { log.withLock { $0.append("\(name) in") } } })
            // Each asks before the next: wait until it is in line.
            while gate.waitingCount < waiting.count { await Task.yield() }
        }
        #expect(log.withLock { $0 } == ["subscribed", "first in"])
        await first.leave()
        for task in waiting { await task.value }
        #expect(log.withLock { $0 } == ["subscribed", "first in", "first out", "second in", "third in"])
    }

    @Test func aSubscriptionIsAddedOnlyOnceTheWritersRunningSideBySideHaveLeft() async {
        let gate = NotesWriteGate()
        let log = LockedBox<[String]>([])
        let sideBySide = HeldWriter(gate, name: "unordered", log: log)
        await sideBySide.waitUntilInside()
        let subscribing = Task { await gate.watch { log.withLock { $0.append("subscribed") } } }
        while gate.drainingCount == 0 { await Task.yield() }
        // From now on writers take turns, although the subscription is not added yet.
        #expect(gate.takesTurns)
        await sideBySide.leave()
        await subscribing.value
        await gate.run { log.withLock { $0.append("next in") } }
        #expect(log.withLock { $0 } == ["unordered in", "unordered out", "subscribed", "next in"])
    }

    @Test func withTheLastSubscriptionGoneWritersRunSideBySideAgain() async {
        let gate = NotesWriteGate()
        let log = LockedBox<[String]>([])
        await gate.watch {}
        await gate.watch {}
        gate.unwatch()
        #expect(gate.takesTurns)
        gate.unwatch()
        #expect(!gate.takesTurns)
        let first = HeldWriter(gate, name: "first", log: log)
        await first.waitUntilInside()
        let second = HeldWriter(gate, name: "second", log: log)
        await second.waitUntilInside()
        #expect(gate.sideBySideCount == 2)
        await first.leave()
        await second.leave()
    }
}
