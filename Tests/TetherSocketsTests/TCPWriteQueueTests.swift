import NIOCore
import Testing

@testable import TetherSockets

private typealias Queue = TCPWriteQueue<String>

private func bytes(_ count: Int) -> ByteBuffer { ByteBuffer(repeating: 0x61, count: count) }

/// Every task accepted now, in order.
private func accepted(_ q: inout Queue, window: Int) -> [String] {
    var tasks: [String] = []
    while let next = q.nextAccepted(window: window) { tasks.append(next.task) }
    return tasks
}

private func render(_ progress: Queue.Progress) -> String {
    switch progress {
    case .partial(let tag, let length): return "partial \(length) → \(tag.map { "tag \($0)" } ?? "task")"
    case .completed(.delegate(let tag)): return "completed tag \(tag)"
    case .completed(.task(let task)): return "completed task \(task ?? "-")"
    case .ignored: return "ignored"
    }
}

struct TCPWriteQueueTests {
    @Test func writesGoOutAtOnceWhenTheChannelCanSendAndAreHeldOtherwise() {
        var q = Queue()
        #expect(q.enqueue(id: 1, bytes: bytes(3), timeout: nil, waiter: .delegate(tag: 1), canSend: false) == nil)
        #expect(q.enqueue(id: 2, bytes: bytes(2), timeout: nil, waiter: .delegate(tag: 2), canSend: false) == nil)
        #expect(q.lastHandedID == 0)
        #expect(q.takeHeld().map(\.id) == [1, 2])
        #expect(q.lastHandedID == 2)
        #expect(q.takeHeld().isEmpty)
        #expect(
            q.enqueue(id: 3, bytes: bytes(1), timeout: nil, waiter: .delegate(tag: 3), canSend: true)?.readableBytes
                == 1
        )
        #expect(q.lastHandedID == 3)
    }

    @Test func writesBehindATLSBarrierAreHeldUntilItLifts() {
        var q = Queue()
        q.tlsBarrier = 1
        #expect(q.enqueue(id: 1, bytes: bytes(1), timeout: nil, waiter: .delegate(tag: 1), canSend: true) != nil)
        #expect(q.enqueue(id: 2, bytes: bytes(1), timeout: nil, waiter: .delegate(tag: 2), canSend: true) == nil)
        #expect(q.takeHeld().isEmpty)
        q.tlsBarrier = nil
        #expect(q.takeHeld().map(\.id) == [2])
    }

    @Test func progressIsReportedPerSliceAndCompletionInOrder() {
        var q = Queue()
        _ = q.enqueue(id: 1, bytes: bytes(10), timeout: nil, waiter: .delegate(tag: 7), canSend: true)
        _ = q.enqueue(id: 2, bytes: bytes(1), timeout: nil, waiter: .delegate(tag: 8), canSend: true)
        #expect(render(q.written(id: 1, length: 4)) == "partial 4 → tag 7")
        #expect(q.progress == GCDAsyncSocket.IOProgress(tag: 7, bytesDone: 4, total: 10))
        #expect(render(q.written(id: 2, length: 1)) == "ignored")  // not the head
        #expect(render(q.written(id: 1, length: 6)) == "completed tag 7")
        #expect(render(q.written(id: 2, length: 1)) == "completed tag 8")
        #expect(q.isEmpty && q.progress == nil)
    }

    @Test func aDelegateWriteTimerIsArmedOnceAsksWithElapsedTimeAndCanBeExtended() {
        var q = Queue()
        _ = q.enqueue(id: 1, bytes: bytes(10), timeout: .seconds(1), waiter: .delegate(tag: 1), canSend: true)
        q.armTimerIfNeeded()
        #expect(q.timer == .init(id: 1, duration: .seconds(1)))
        _ = q.written(id: 1, length: 3)
        let asked = q.timerFired(id: 1, duration: .seconds(1))
        #expect(asked?.tag == 1 && asked?.elapsed == .seconds(1) && asked?.bytesDone == 3)
        #expect(q.timer == nil)
        q.armTimerIfNeeded()
        #expect(q.timer == nil)  // once per write; an extension re-arms it
        #expect(q.timeoutAnswered(id: 1, extension: .milliseconds(500)) == true)
        #expect(q.timer == .init(id: 1, duration: .milliseconds(500)))
        #expect(q.timerFired(id: 1, duration: .milliseconds(500))?.elapsed == .milliseconds(1500))
        #expect(q.timeoutAnswered(id: 1, extension: .zero) == false)
        #expect(q.timeoutAnswered(id: 9, extension: .seconds(1)) == nil)
    }

    @Test func tasksAndHeldWritesArmNoTimer() {
        var q = Queue()
        _ = q.enqueue(id: 1, bytes: bytes(1), timeout: .seconds(1), waiter: .task(nil), canSend: true)
        q.armTimerIfNeeded()
        #expect(q.timer == nil)
        var held = Queue()
        held.tlsBarrier = 0
        _ = held.enqueue(id: 1, bytes: bytes(1), timeout: .seconds(1), waiter: .delegate(tag: 1), canSend: true)
        held.armTimerIfNeeded()
        #expect(held.timer == nil)
    }

    @Test func tasksWaitUntilTheirWriteIsHandedAndFewerThanTheWindowAreAhead() {
        var q = Queue()
        _ = q.enqueue(id: 1, bytes: bytes(8), timeout: nil, waiter: .task("A"), canSend: true)
        _ = q.enqueue(id: 2, bytes: bytes(8), timeout: nil, waiter: .task("B"), canSend: true)
        _ = q.enqueue(id: 3, bytes: bytes(8), timeout: nil, waiter: .task("C"), canSend: false)
        // A starts at 0, B at 8, C at 16 (held): with a window of 8 only A is accepted.
        #expect(accepted(&q, window: 8) == ["A"])
        #expect(render(q.written(id: 1, length: 8)) == "completed task -")
        #expect(accepted(&q, window: 8) == ["B"])
        _ = q.written(id: 2, length: 8)
        #expect(accepted(&q, window: 8).isEmpty)  // C is held
        _ = q.takeHeld()
        #expect(accepted(&q, window: 8) == ["C"])
    }

    @Test func anAbandonedTaskStopsWaitingAndItsBytesStayQueued() {
        var q = Queue()
        _ = q.enqueue(id: 1, bytes: bytes(8), timeout: nil, waiter: .task("A"), canSend: false)
        #expect(q.abandon(id: 1) == "A")
        #expect(q.abandon(id: 1) == nil)
        #expect(q.headID == 1)
        #expect(q.takeHeld().map(\.id) == [1])
    }

    @Test func closingHandsBackTheWaitingTasksAndTheTags() {
        var q = Queue()
        _ = q.enqueue(id: 1, bytes: bytes(1), timeout: .seconds(1), waiter: .delegate(tag: 4), canSend: true)
        _ = q.enqueue(id: 2, bytes: bytes(1), timeout: nil, waiter: .task("T"), canSend: true)
        q.armTimerIfNeeded()
        #expect(q.pendingTags == [4])
        #expect(q.removeAll() == ["T"])
        #expect(q.isEmpty && q.timer == nil && q.waiting.isEmpty)
    }
}
