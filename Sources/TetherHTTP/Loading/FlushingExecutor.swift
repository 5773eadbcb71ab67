import Dispatch
import NIOCore
import NIOPosix
import TetherConcurrency

/// The executor of a delegate-face load's task: runs its jobs on a serial Dispatch queue of its own, and after each
/// job (the task suspended or ended) calls ``afterJob``.
///
/// `URLConnection` defers the delegate calls that its load produces and flushes them there, so the response, the
/// data and the finish that a load produces in one go reach the delegate queue in one operation instead of
/// racing it one by one. No call waits longer than the synchronous stretch of the load that produced it.
///
/// The queue is a private serial one (on Linux it may always have a thread): on the global queue, whose threads
/// are few, loads stalled behind code that blocked those threads (a semaphore waited on a global queue) until their
/// idle timeouts fired.
///
/// Given the engine's event loops (`loops`), a job enqueued from one of them (the engine resuming the load with a
/// response or a body part) runs on that loop, behind what it is doing, instead of waking the queue's thread; and
/// the load's first job runs on the loop that last resumed a load, where its connection most likely is. The load
/// then costs no hop to another thread and back. Only for loads whose code cannot block (no body stream to read, no
/// disk cache to write): such a load runs all its jobs on the loops (one enqueued from another thread runs on the
/// last loop that resumed a load, else on the first loop). Other loads pass no loops and run on the queue.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class FlushingExecutor: TaskExecutor {
    private let afterJob: @Sendable () -> Void
    private let loops: [any EventLoop]
    private let hint: LoopHint
    /// Only for loads that may not run on the loops (none given): a queue costs an allocation per load.
    private let queue: DispatchQueue?

    init(loops: [any EventLoop] = [], hint: LoopHint = .shared, afterJob: @escaping @Sendable () -> Void) {
        self.loops = loops
        self.hint = hint
        self.afterJob = afterJob
        self.queue = loops.isEmpty ? DispatchQueue(label: "tether.http.load") : nil
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard let queue = self.queue else {
            self.loop().execute {
                job.runSynchronously(on: self.asUnownedTaskExecutor())
                self.afterJob()
            }
            return
        }
        queue.async {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
            self.afterJob()
        }
    }

    /// The loop to run the next job on (`loops` is not empty): the current thread's, when it is one of `loops`;
    /// else the last loop that resumed a load, when it is one of them; else the first of them.
    private func loop() -> any EventLoop {
        if let current = MultiThreadedEventLoopGroup.currentEventLoop,
            self.loops.contains(where: { $0 === current })
        {
            self.hint.record(current)
            return current
        }
        if let last = self.hint.loop, self.loops.contains(where: { $0 === last }) { return last }
        return self.loops[0]
    }
}

/// The loop that last resumed a load that follows the engine's loops: the next such load starts there.
final class LoopHint: Sendable {
    /// The hint of every `URLConnection`.
    static let shared = LoopHint()

    private let last = LockedBox<(any EventLoop)?>(nil)

    var loop: (any EventLoop)? { self.last.withLock { $0 } }

    func record(_ loop: any EventLoop) {
        self.last.withLock { last in
            if last !== loop { last = loop }
        }
    }
}
