import Dispatch

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
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class FlushingExecutor: TaskExecutor {
    private let afterJob: @Sendable () -> Void
    private let queue = DispatchQueue(label: "tether.http.load")

    init(afterJob: @escaping @Sendable () -> Void) {
        self.afterJob = afterJob
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.queue.async {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
            self.afterJob()
        }
    }
}
