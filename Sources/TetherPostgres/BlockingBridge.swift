import Foundation
import NIOPosix
import TetherConcurrency
import TetherStore

/// Runs async PostgreSQL work for the synchronous ``TetherStore/ObjectContext`` API: the caller's thread waits on a
/// semaphore while a task runs the work on this executor's one thread of its own.
///
/// The object stores' postgres-nio pools also run on this thread (their `run()` is started with it as executor
/// preference), so that the work never needs a thread of the cooperative pool: a context's caller blocking one of
/// those (there are only as many as cores) cannot starve the very work it waits for. Nothing here blocks an event
/// loop; the thread only runs short jobs and waits for the next.
// Sendable: `jobs` is only used under `condition`'s lock.
final class BlockingBridge: TaskExecutor, @unchecked Sendable {
    /// The one bridge of the process, its thread started on first use.
    static let shared = BlockingBridge()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = "TetherPostgres bridge"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    private func serve() {
        while true {
            let batch = condition.withLock {
                while jobs.isEmpty { condition.wait() }
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Runs `body` on the bridge and waits for its result on the calling thread.
    ///
    /// Must not be called from the bridge's own thread (it would wait for itself).
    /// - Throws: `StoreError.Code.invalidArgument`, without running `body`, when called on an event loop (blocking
    ///   it could stall every connection on it, the database's included); otherwise `body`'s error.
    func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw StoreError(
                code: .invalidArgument,
                message: "a PostgreSQL object store was called on an event loop, which must never block: "
                    + "call it from a thread or a task that may"
            )
        }
        let result = LockedBox<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: self) {
            do {
                let value = try await body()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0 }!.get()
    }
}
