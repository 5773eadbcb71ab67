import Testing
import TetherConcurrency

@testable import TetherNotes

/// Waiting for a server's connection count, without I/O: a wait ends when the count it asks for is reached, at once
/// when it already is, and with `CancellationError` when its task is cancelled first.
@Suite("NotesConnectionWaiters, without I/O", .timeLimit(.minutes(1)))
struct NotesConnectionWaitersTests {
    @Test func aWaitForACountAlreadyReachedReturnsAtOnce() async throws {
        let waiters = NotesConnectionWaiters()
        try await waiters.wait(until: { $0 == 0 }, count: { 0 })
    }

    @Test func aWaitEndsWhenTheCountItAsksForIsReached() async throws {
        let waiters = NotesConnectionWaiters()
        let count = LockedBox(3)
        let reading: @Sendable () -> Int = { count.withLock { $0 } }
        let (registered, registering) = AsyncStream.makeStream(of: Void.self)
        // The condition is first asked (and found false) as the waiter registers, under the lock it registers in:
        // the count changes only after that, so the wait can end only by being woken.
        async let waited: Void = waiters.wait(
            until: { count in
                if count > 1 { registering.yield() }
                return count <= 1
            },
            count: reading
        )
        for await _ in registered { break }
        for next in [2, 1] {
            count.withLock { $0 = next }
            waiters.countChanged(reading)
        }
        try await waited
        #expect(reading() == 1)
    }

    @Test func aCancelledWaitThrowsCancellationError() async throws {
        let waiters = NotesConnectionWaiters()
        let task = Task { try await waiters.wait(until: { $0 == 10 }, count: { 0 }) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
