import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency

@testable import TetherHTTP

/// The executor of delegate-face loads: its queue by default; the engine's loops for a load whose code cannot block.
@Suite(.timeLimit(.minutes(1)))
struct FlushingExecutorTests {
    /// Suspends a task and resumes it from a given loop's thread once the job that suspended it has ended (from the
    /// executor's `afterJob`), so that the resumption always enqueues a job from that thread.
    final class Resumer: Sendable {
        private struct Pending {
            let continuation: CheckedContinuation<Void, Never>
            let loop: any EventLoop
        }

        private let pending = LockedBox<Pending?>(nil)
        let afterJobs = LockedBox(0)

        func afterJob() {
            self.afterJobs.withLock { $0 += 1 }
            guard
                let pending = self.pending.withLock({ pending -> Pending? in
                    defer { pending = nil }
                    return pending
                })
            else { return }
            pending.loop.execute { pending.continuation.resume() }
        }

        func suspend(resumingFrom loop: any EventLoop) async {
            await withCheckedContinuation { continuation in
                self.pending.withLock { $0 = Pending(continuation: continuation, loop: loop) }
            }
        }
    }

    /// Runs `body` in a task that prefers `executor`, and returns what it returns.
    private func run<T: Sendable>(on executor: FlushingExecutor, _ body: @escaping @Sendable () async -> T) async -> T {
        await Task(executorPreference: executor) { await body() }.value
    }

    @Test func withoutLoopsEveryJobRunsOnTheQueueAndIsFollowedByAfterJob() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let resumer = Resumer()
        let executor = FlushingExecutor(hint: LoopHint()) { resumer.afterJob() }
        let onLoop = await self.run(on: executor) { () -> [Bool] in
            let first = MultiThreadedEventLoopGroup.currentEventLoop != nil
            await resumer.suspend(resumingFrom: group.next())
            return [first, MultiThreadedEventLoopGroup.currentEventLoop != nil]
        }
        #expect(onLoop == [false, false])
        // The task was resumed at all: `afterJob` ran once its first job had ended.
        #expect(resumer.afterJobs.withLock { $0 } >= 1)
        try await group.shutdownGracefully()
    }

    @Test func aJobResumedByOneOfTheLoopsRunsThereAndTheNextLoadStartsThere() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = Array(group.makeIterator())
        let hint = LoopHint()
        let resumer = Resumer()
        let first = FlushingExecutor(loops: loops, hint: hint) { resumer.afterJob() }
        let (startedOnFirst, resumedOnSecond) = await self.run(on: first) { () -> (Bool, Bool) in
            // No loop has resumed a load yet: the first job runs on the first loop.
            let started = loops[0].inEventLoop
            await resumer.suspend(resumingFrom: loops[1])
            return (started, loops[1].inEventLoop)
        }
        #expect(startedOnFirst)
        #expect(resumedOnSecond)
        // The task was resumed at all: `afterJob` ran once its first job had ended.
        #expect(resumer.afterJobs.withLock { $0 } >= 1)
        #expect(hint.loop === loops[1])

        let second = FlushingExecutor(loops: loops, hint: hint) {}
        let startedOnSecond = await self.run(on: second) { loops[1].inEventLoop }
        #expect(startedOnSecond)
        try await group.shutdownGracefully()
    }

    @Test func aJobResumedByAnotherGroupsLoopRunsOnTheEnginesLoop() async throws {
        let engine = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let other = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let hint = LoopHint()
        hint.record(other.next())
        let resumer = Resumer()
        let executor = FlushingExecutor(loops: Array(engine.makeIterator()), hint: hint) { resumer.afterJob() }
        let onEngine = await self.run(on: executor) { () -> [Bool] in
            // The hint names a loop that is not the engine's: the first job runs on the engine's loop, and so does
            // the one another group's loop resumes.
            let first = engine.next().inEventLoop
            await resumer.suspend(resumingFrom: other.next())
            return [first, engine.next().inEventLoop]
        }
        #expect(onEngine == [true, true])
        // Only the engine's loops are recorded.
        #expect(hint.loop === other.next())
        try await engine.shutdownGracefully()
        try await other.shutdownGracefully()
    }
}
