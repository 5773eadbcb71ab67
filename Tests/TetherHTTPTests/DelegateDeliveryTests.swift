import Dispatch
import Foundation
import Testing
import TetherConcurrency

@testable import TetherHTTP

/// The delivery that runs a connection's delegate calls: in order, one at a time, in batches of bounded size.
struct DelegateDeliveryTests {
    @Test func queuedCallsRunInOrderInBatchesThatLeaveTheQueueToOthers() throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let delivery = DelegateDelivery(target: .queue(queue))
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let log = LockedBox<[String]>([])
        delivery.submit { _ in
            started.signal()
            gate.wait()
        }
        started.wait()
        for index in 0..<200 {
            delivery.submit { isLive in
                log.withLock { $0.append(isLive ? "call \(index)" : "dead \(index)") }
                if index == 199 { done.signal() }
            }
        }
        // Another operation on the same queue, queued while every call waits behind the first.
        queue.addOperation { log.withLock { $0.append("other") } }
        gate.signal()
        done.wait()
        queue.waitUntilAllOperationsAreFinished()
        let entries = log.withLock { $0 }
        let calls = entries.filter { $0.hasPrefix("call") }
        #expect(calls == (0..<200).map { "call \($0)" })
        // A batch runs at most 64 calls, then the delivery queues its next batch behind what waits.
        let other = try #require(entries.firstIndex(of: "other"))
        #expect(other > 0 && other < entries.count - 1)
    }

    @Test func afterCloseNoCallBeginsAndPendingOnesRunAsDead() {
        let queue = OperationQueue()
        let delivery = DelegateDelivery(target: .queue(queue))
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let log = LockedBox<[String]>([])
        delivery.submit { _ in
            started.signal()
            gate.wait()
        }
        delivery.submit { isLive in log.withLock { $0.append(isLive ? "live" : "dead") } }
        // The first call is running on the queue; the second waits behind it.
        started.wait()
        delivery.close()
        gate.signal()
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.withLock { $0 } == ["dead"])
    }

    @Test func onTwoRunLoopsEveryCallRunsOnceInOrderAndAfterCloseASubmitRunsDeadAtOnce() {
        let first = RunLoopThread()
        let second = RunLoopThread()
        defer {
            first.stop()
            second.stop()
        }
        // Both run loops are offered every batch; whichever runs it first claims it, the other finds it taken.
        let delivery = DelegateDelivery(target: .runLoops([(first.runLoop, .default), (second.runLoop, .default)]))
        let done = DispatchSemaphore(value: 0)
        let log = LockedBox<[Int]>([])
        let count = 300
        for index in 0..<count {
            delivery.submit { isLive in
                if isLive { log.withLock { $0.append(index) } }
                if index == count - 1 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(log.withLock { $0 } == Array(0..<count))

        delivery.close()
        let caller = Thread.current
        let dead = LockedBox<(isLive: Bool, onCaller: Bool)?>(nil)
        delivery.submit { isLive in dead.withLock { $0 = (isLive, Thread.current === caller) } }
        let ran = dead.withLock { $0 }
        #expect(ran?.isLive == false)
        #expect(ran?.onCaller == true)
    }

    @Test func deferredCallsWaitForAFlushAndThenRunInOneOperation() {
        let queue = OperationQueue()
        queue.isSuspended = true
        let delivery = DelegateDelivery(target: .queue(queue))
        let log = LockedBox<[String]>([])
        for name in ["response", "data", "finish"] {
            delivery.submit(deferred: true) { isLive in log.withLock { $0.append(isLive ? name : "dead") } }
        }
        // Nothing was handed to the queue yet.
        #expect(queue.operationCount == 0)
        delivery.flush()
        #expect(queue.operationCount == 1)
        // A flush while that batch waits adds no operation: the batch takes what is queued behind it.
        delivery.submit(deferred: true) { isLive in log.withLock { $0.append(isLive ? "late" : "dead") } }
        delivery.flush()
        #expect(queue.operationCount == 1)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.withLock { $0 } == ["response", "data", "finish", "late"])
    }

    @Test func aCallSubmittedAtOnceCarriesTheDeferredOnesBeforeIt() {
        let queue = OperationQueue()
        queue.isSuspended = true
        let delivery = DelegateDelivery(target: .queue(queue))
        let log = LockedBox<[String]>([])
        delivery.submit(deferred: true) { _ in log.withLock { $0.append("deferred") } }
        delivery.submit { _ in log.withLock { $0.append("at once") } }
        #expect(queue.operationCount == 1)
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        #expect(log.withLock { $0 } == ["deferred", "at once"])
    }

    @Test func aLoadTaskOnAFlushingExecutorHandsOverItsCallsWhenItSuspends() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
        let queue = OperationQueue()
        let delivery = DelegateDelivery(target: .queue(queue))
        let executor = FlushingExecutor { delivery.flush() }
        let ran = DispatchSemaphore(value: 0)
        let log = LockedBox<[String]>([])
        // The task never flushes: only the executor's hook after each job can hand the calls over.
        let task = Task(executorPreference: executor) {
            delivery.submit(deferred: true) { _ in log.withLock { $0.append("before suspending") } }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    // Suspended: the first call reaches the queue although nothing else was submitted.
                    ran.wait()
                    continuation.resume()
                }
            }
            delivery.submit(deferred: true) { _ in
                log.withLock { $0.append("at the end") }
                ran.signal()
            }
        }
        // Wait (bounded) for the first call: only the hook can have posted it.
        let deadline = ContinuousClock.now + .seconds(10)
        while log.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(log.withLock { $0 } == ["before suspending"])
        ran.signal()
        await task.value
        #expect(ran.wait(timeout: .now() + 10) == .success)
        #expect(log.withLock { $0 } == ["before suspending", "at the end"])
    }
}
