import Dispatch
import Foundation
import Testing

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
        let log = NSLockedBox<[String]>([])
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
        let log = NSLockedBox<[String]>([])
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
}
