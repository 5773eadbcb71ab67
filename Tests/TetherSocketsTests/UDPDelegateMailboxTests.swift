import Dispatch
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import TetherSockets

/// The delegate-queue mailbox of `GCDAsyncUdpSocket`, without I/O: callbacks posted while the queue is busy wait in
/// one drain, in order, on the queue that was the delegate queue when each was posted.
struct UDPDelegateMailboxTests {
    private static let key = DispatchSpecificKey<String>()

    private static func queue(_ label: String) -> DispatchQueue {
        let queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: label)
        return queue
    }

    /// Records which callback ran on which queue, in the order they ran.
    private final class Runs: Sendable {
        private let runs = NIOLockedValueBox<[(Int, String)]>([])
        var all: [(Int, String)] { runs.withLockedValue { $0 } }

        func item(_ number: Int, delegate: UdpRecorder) -> UDPDelegateMailbox.Item {
            .call(
                { _, _ in
                    let label = DispatchQueue.getSpecific(key: UDPDelegateMailboxTests.key) ?? "?"
                    self.runs.withLockedValue { $0.append((number, label)) }
                },
                delegate
            )
        }
    }

    @Test func callbacksPostedWhileTheQueueIsBusyRunInTheOrderTheyWerePosted() {
        let mailbox = UDPDelegateMailbox()
        let delegate = UdpRecorder(label: "mailbox.order")
        let socket = GCDAsyncUdpSocket(delegate: delegate, delegateQueue: delegate.queue)
        let busy = Self.queue("busy")
        let runs = Runs()
        busy.suspend()
        for number in 1...500 { mailbox.post(runs.item(number, delegate: delegate), on: busy, for: socket) }
        busy.resume()
        busy.sync {}
        #expect(runs.all.map(\.0) == Array(1...500))
        #expect(runs.all.allSatisfy { $0.1 == "busy" })
    }

    @Test func aBlockQueuedAfterACallbackWasPostedRunsAfterIt() {
        let mailbox = UDPDelegateMailbox()
        let delegate = UdpRecorder(label: "mailbox.barrier")
        let socket = GCDAsyncUdpSocket(delegate: delegate, delegateQueue: delegate.queue)
        let queue = Self.queue("barrier")
        let runs = Runs()
        queue.suspend()
        for number in 1...200 { mailbox.post(runs.item(number, delegate: delegate), on: queue, for: socket) }
        let seenAtBarrier = NIOLockedValueBox<Int>(-1)
        queue.async { seenAtBarrier.withLockedValue { $0 = runs.all.count } }
        queue.resume()
        queue.sync {}
        #expect(seenAtBarrier.withLockedValue { $0 } == 200)
    }

    @Test func aCallbackPostedForANewDelegateQueueRunsThereWhileTheOldOneDrains() {
        let mailbox = UDPDelegateMailbox()
        let delegate = UdpRecorder(label: "mailbox.switch")
        let socket = GCDAsyncUdpSocket(delegate: delegate, delegateQueue: delegate.queue)
        let old = Self.queue("old")
        let new = Self.queue("new")
        let runs = Runs()
        old.suspend()
        mailbox.post(runs.item(1, delegate: delegate), on: old, for: socket)
        mailbox.post(runs.item(2, delegate: delegate), on: old, for: socket)
        mailbox.post(runs.item(3, delegate: delegate), on: new, for: socket)
        mailbox.post(runs.item(4, delegate: delegate), on: new, for: socket)
        new.sync {}
        // The old queue is still suspended: the new queue's callbacks did not wait for it.
        #expect(runs.all.map(\.0) == [3, 4])
        #expect(runs.all.allSatisfy { $0.1 == "new" })
        old.resume()
        old.sync {}
        let onOld = runs.all.filter { $0.1 == "old" }.map(\.0)
        #expect(onOld == [1, 2])
        // Once the old queue's drain ended, the new queue has the mailbox: order kept there too.
        mailbox.post(runs.item(5, delegate: delegate), on: new, for: socket)
        new.sync {}
        #expect(runs.all.filter { $0.1 == "new" }.map(\.0) == [3, 4, 5])
    }
}
