import NIOCore
import Testing

@testable import TetherSockets

/// The read queue as a table: a queue in a given state, one event, the actions it hands out (in order, up to the
/// first that stops). Tasks are plain strings here; the engine uses continuations.
private typealias Queue = TCPReadQueue<String>

/// Runs `next()` until an action that stops, and renders every action.
private func drain(_ queue: inout Queue) -> [String] {
    var out: [String] = []
    while true {
        let action = queue.next()
        out.append(render(action))
        switch action {
        case .awaitTLS, .awaitBytes, .idle, .close, .askTimeout: return out
        default: continue
        }
    }
}

private func render(_ action: Queue.Action) -> String {
    switch action {
    case .deliver(let bytes, let waiter): return "deliver \(String(buffer: bytes)) → \(render(waiter))"
    case .endOfStream(let task): return "end of stream → \(task)"
    case .fail(let waiter, let error): return "fail \(render(waiter)): \(code(error))"
    case .partial(let tag, let length): return "partial \(length) → tag \(tag)"
    case .readStreamClosed: return "read stream closed"
    case .askTimeout(let tag, let elapsed, let done):
        return "ask timeout tag \(tag) after \(elapsed.nanoseconds / 1_000_000) ms, \(done) done"
    case .close(let error): return "close: \(error.code)"
    case .awaitTLS: return "await TLS"
    case .awaitBytes: return "await bytes"
    case .idle: return "idle"
    }
}

private func render(_ waiter: ReadWaiter<String>) -> String {
    switch waiter {
    case .delegate(let tag, _): return "tag \(tag)"
    case .task(let task): return task
    case .frame: return "frame"
    }
}

private func code(_ error: any Error) -> String {
    (error as? GCDAsyncSocketError).map { "\($0.code)" } ?? "\(type(of: error))"
}

/// A queue with the given policy, reads and bytes.
private func queue(
    _ policy: EnginePolicy,
    reads: [(ReadKind, ReadWaiter<String>)] = [],
    timeout: TimeAmount? = nil,
    bytes: String = "",
    inputClosed: Bool = false
) -> Queue {
    var queue = Queue(policy: policy)
    for (index, (kind, waiter)) in reads.enumerated() {
        _ = queue.enqueue(id: UInt64(index + 1), kind: kind, timeout: timeout, waiter: waiter)
    }
    if !bytes.isEmpty { queue.received(ByteBuffer(string: bytes)) }
    if inputClosed { queue.endOfInput() }
    return queue
}

private var tag1: ReadWaiter<String> { .delegate(tag: 1, destination: nil) }
private var tag2: ReadWaiter<String> { .delegate(tag: 2, destination: nil) }
private let crlf: [UInt8] = [0x0D, 0x0A]

struct TCPReadQueueTests {
    // MARK: delegate face (CocoaAsyncSocket's rules)

    @Test func delegateReadsCompleteInOrderAndReportPartialProgress() {
        var q = queue(.delegateFace, reads: [(.length(4), tag1), (.separator(crlf, maxLength: 0), tag2)], bytes: "ab")
        #expect(drain(&q) == ["partial 2 → tag 1", "await bytes"])
        q.received(ByteBuffer(string: "cdHI\r\nrest"))
        #expect(drain(&q) == ["deliver abcd → tag 1", "deliver HI\r\n → tag 2", "idle"])
        #expect(String(buffer: q.receiveBuffer.front) == "rest")
    }

    @Test func delegateAvailableReadTakesWhatIsThereUpToItsCap() {
        var q = queue(.delegateFace, reads: [(.available(maxLength: 3), tag1), (.available(maxLength: 0), tag2)])
        #expect(drain(&q) == ["await bytes"])
        q.received(ByteBuffer(string: "hello"))
        #expect(drain(&q) == ["deliver hel → tag 1", "deliver lo → tag 2", "idle"])
    }

    @Test func delegateSeparatorPastItsMaximumClosesTheConnection() {
        var q = queue(.delegateFace, reads: [(.separator(crlf, maxLength: 4), tag1)], bytes: "abcdef")
        #expect(drain(&q) == ["close: readMaxedOut"])
        #expect(q.pendingTags == [1])
        #expect(String(buffer: q.receiveBuffer.front) == "abcdef")
    }

    @Test func delegateEndOfStreamClosesOnceTheBufferedBytesAreServed() {
        var waiting = queue(.delegateFace, reads: [(.length(8), tag1)], bytes: "abc", inputClosed: true)
        #expect(drain(&waiting) == ["partial 3 → tag 1", "close: closed"])
        var unread = queue(.delegateFace, bytes: "abc", inputClosed: true)
        #expect(drain(&unread) == ["idle"])
        _ = unread.enqueue(id: 9, kind: .length(3), timeout: nil, waiter: tag1)
        #expect(drain(&unread) == ["deliver abc → tag 1", "close: closed"])
        var empty = queue(.delegateFace, inputClosed: true)
        #expect(drain(&empty) == ["close: closed"])
    }

    @Test func delegateTimeoutAsksTheDelegateAndPausesReadsUntilItAnswers() {
        var q = queue(.delegateFace, reads: [(.length(4), tag1)], timeout: .milliseconds(100), bytes: "ab")
        #expect(drain(&q) == ["partial 2 → tag 1", "await bytes"])
        #expect(q.timer == .init(id: 1, duration: .milliseconds(100)))
        #expect(render(q.timerFired(id: 1, duration: .milliseconds(100))) == "ask timeout tag 1 after 100 ms, 2 done")
        #expect(q.timer == nil)
        q.received(ByteBuffer(string: "cd"))
        #expect(drain(&q) == ["idle"])  // paused: the answer comes first
        #expect(render(q.timeoutAnswered(id: 1, extension: .milliseconds(50))) == "await bytes")
        #expect(q.timer == .init(id: 1, duration: .milliseconds(50)))
        #expect(drain(&q) == ["deliver abcd → tag 1", "idle"])
        #expect(q.timer == nil)
    }

    @Test func delegateTimeoutElapsedAddsUpAndANonPositiveAnswerCloses() {
        var q = queue(.delegateFace, reads: [(.length(4), tag1)], timeout: .milliseconds(100))
        _ = drain(&q)
        _ = q.timerFired(id: 1, duration: .milliseconds(100))
        _ = q.timeoutAnswered(id: 1, extension: .milliseconds(50))
        #expect(render(q.timerFired(id: 1, duration: .milliseconds(50))) == "ask timeout tag 1 after 150 ms, 0 done")
        #expect(render(q.timeoutAnswered(id: 1, extension: .zero)) == "close: readTimeout")
    }

    @Test func aStaleTimerOrAnswerChangesNothing() {
        var q = queue(.delegateFace, reads: [(.length(4), tag1)], timeout: .seconds(1))
        _ = drain(&q)
        #expect(render(q.timerFired(id: 7, duration: .seconds(1))) == "idle")
        #expect(q.timer == .init(id: 1, duration: .seconds(1)))
        #expect(render(q.timeoutAnswered(id: 7, extension: .seconds(1))) == "idle")
        #expect(q.timer == .init(id: 1, duration: .seconds(1)))
    }

    @Test func readsBehindATLSBarrierWaitForTheHandshake() {
        var q = queue(.delegateFace, reads: [(.length(2), tag1), (.length(2), tag2)], bytes: "abcd")
        q.tlsBarrier = 1
        #expect(drain(&q) == ["deliver ab → tag 1", "await TLS"])
        #expect(q.headID == 2)
        q.tlsBarrier = nil
        #expect(drain(&q) == ["deliver cd → tag 2", "idle"])
    }

    @Test func closingHandsBackEveryWaiterTagAndUnreadByte() {
        var q = queue(
            .delegateFace,
            reads: [(.length(9), tag1), (.length(2), tag2)],
            timeout: .seconds(1),
            bytes: "xyz"
        )
        _ = drain(&q)
        #expect(q.pendingTags == [1, 2])
        #expect(q.removeAll().map(render) == ["tag 1", "tag 2"])
        #expect(q.timer == nil && q.headID == nil)
        #expect(String(buffer: q.takeBuffer()) == "xyz")
        #expect(q.bufferedBytes == 0)
    }

    @Test func progressDescribesTheHeadRead() {
        var q = queue(.delegateFace, reads: [(.length(10), tag1)], bytes: "abcd")
        _ = drain(&q)
        #expect(q.progress == GCDAsyncSocket.IOProgress(tag: 1, bytesDone: 4, total: 10))
        #expect(queue(.delegateFace).progress == nil)
    }

    // MARK: async face (TCPConnection's rules)

    @Test func asyncFailuresConsumeNothingAndKeepTheConnection() {
        var q = queue(.asyncFace, reads: [(.separator(crlf, maxLength: 3), .task("A")), (.length(5), .task("B"))])
        q.received(ByteBuffer(string: "abcdef"))
        #expect(drain(&q) == ["fail A: readMaxedOut", "deliver abcde → B", "idle"])
        #expect(String(buffer: q.receiveBuffer.front) == "f")
    }

    @Test func asyncEndOfStreamIsNilForAnEmptyAvailableReadAndAnErrorOtherwise() {
        var q = queue(
            .asyncFace,
            reads: [
                (.length(4), .task("A")), (.available(maxLength: 0), .task("B")),
                (.available(maxLength: 0), .task("C")),
            ],
            bytes: "ab",
            inputClosed: true
        )
        #expect(drain(&q) == ["fail A: closed", "deliver ab → B", "end of stream → C", "read stream closed", "idle"])
        #expect(drain(&q) == ["idle"])  // reported once
    }

    @Test func asyncTimeoutFailsTheTaskAndConsumesNothing() {
        var q = queue(
            .asyncFace,
            reads: [(.length(4), .task("A")), (.length(1), .task("B"))],
            timeout: .seconds(1),
            bytes: "ab"
        )
        #expect(drain(&q) == ["await bytes"])
        #expect(render(q.timerFired(id: 1, duration: .seconds(1))) == "fail A: readTimeout")
        #expect(drain(&q) == ["deliver a → B", "idle"])
    }

    @Test func cancellingAReadRemovesItAndItsTimer() {
        var q = queue(.asyncFace, reads: [(.length(4), .task("A")), (.length(1), .task("B"))], timeout: .seconds(1))
        _ = drain(&q)
        let second = q.cancel(id: 2)
        #expect(second.map { render($0.waiter) } == "B" && second?.wasHead == false)
        #expect(q.timer == .init(id: 1, duration: .seconds(1)))
        let first = q.cancel(id: 1)
        #expect(first?.wasHead == true && q.timer == nil)
        #expect(q.cancel(id: 1) == nil)
    }

    // MARK: frames

    @Test func frameReadsDecodeFromTheBufferAndWaitForMore() {
        let frames = FrameProbe(frameLength: 3)
        var q = queue(.asyncFace, reads: [(.available(maxLength: 0), .frame(frames))], bytes: "ab")
        #expect(drain(&q) == ["await bytes"])
        q.received(ByteBuffer(string: "cde"))
        #expect(drain(&q) == ["idle"])
        #expect(frames.decoded == ["abc"])
        #expect(String(buffer: q.receiveBuffer.front) == "de")
    }

    // MARK: the table: every state × event

    /// For each state of the queue (no read, a read waiting for bytes, a read behind TLS, paused for a timeout
    /// answer, input closed) and each event, the first action handed out afterwards.
    @Test(arguments: ReadQueueState.allCases, ReadQueueEvent.allCases)
    func everyStateAndEvent(state: ReadQueueState, event: ReadQueueEvent) {
        var q = state.make()
        let immediate = event.apply(to: &q)
        let outcome = immediate ?? drain(&q).first!
        #expect(outcome == expected[state]![event], "\(state) × \(event)")
    }
}

/// A codec stand-in: frames of a fixed length.
private final class FrameProbe: FrameReadOperation {
    let frameLength: Int
    var decoded: [String] = []
    init(frameLength: Int) { self.frameLength = frameLength }
    func attempt(_ buffer: inout ByteBuffer, inputClosed: Bool) -> Bool {
        guard let frame = buffer.readSlice(length: frameLength) else { return false }
        decoded.append(String(buffer: frame))
        return true
    }
    func fail(_ error: any Error) {}
    var decodedAhead: (any ReclaimableFrames)? { nil }
}

/// The states of the table.
enum ReadQueueState: String, CaseIterable, CustomStringConvertible {
    case empty, waitingForBytes, behindTLS, pausedForTimeoutAnswer, inputClosedWithBytes
    var description: String { rawValue }

    fileprivate func make() -> Queue {
        switch self {
        case .empty:
            return queue(.delegateFace)
        case .waitingForBytes:
            var q = queue(.delegateFace, reads: [(.length(4), tag1)], timeout: .seconds(1))
            _ = drain(&q)
            return q
        case .behindTLS:
            var q = queue(.delegateFace)
            q.tlsBarrier = 0
            _ = q.enqueue(id: 1, kind: .length(4), timeout: .seconds(1), waiter: tag1)
            return q
        case .pausedForTimeoutAnswer:
            var q = queue(.delegateFace, reads: [(.length(4), tag1)], timeout: .seconds(1))
            _ = drain(&q)
            _ = q.timerFired(id: 1, duration: .seconds(1))
            return q
        case .inputClosedWithBytes:
            return queue(.delegateFace, bytes: "ab", inputClosed: true)
        }
    }
}

/// The events of the table.
enum ReadQueueEvent: String, CaseIterable, CustomStringConvertible {
    case enqueue, bytes, endOfInput, timerFired, timeoutAnswered, cancelHead
    var description: String { rawValue }

    /// Applies the event; returns the rendered action when the event itself answers with one.
    fileprivate func apply(to q: inout Queue) -> String? {
        switch self {
        case .enqueue:
            _ = q.enqueue(id: 5, kind: .length(2), timeout: nil, waiter: tag2)
            return nil
        case .bytes:
            q.received(ByteBuffer(string: "abcd"))
            return nil
        case .endOfInput:
            q.endOfInput()
            return nil
        case .timerFired:
            return render(q.timerFired(id: 1, duration: .seconds(1)))
        case .timeoutAnswered:
            return render(q.timeoutAnswered(id: 1, extension: .seconds(2)))
        case .cancelHead:
            return q.cancel(id: 1).map { "cancelled \(render($0.waiter))" } ?? "nothing to cancel"
        }
    }
}

/// What each state answers to each event: the table of the read queue.
private let expected: [ReadQueueState: [ReadQueueEvent: String]] = [
    .empty: [
        .enqueue: "await bytes",
        .bytes: "idle",
        .endOfInput: "close: closed",
        .timerFired: "idle",
        .timeoutAnswered: "idle",
        .cancelHead: "nothing to cancel",
    ],
    .waitingForBytes: [
        .enqueue: "await bytes",
        .bytes: "deliver abcd → tag 1",
        .endOfInput: "close: closed",
        .timerFired: "ask timeout tag 1 after 1000 ms, 0 done",
        .timeoutAnswered: "idle",
        .cancelHead: "cancelled tag 1",
    ],
    .behindTLS: [
        .enqueue: "await TLS",
        .bytes: "await TLS",
        .endOfInput: "await TLS",
        .timerFired: "idle",
        .timeoutAnswered: "idle",
        .cancelHead: "cancelled tag 1",
    ],
    .pausedForTimeoutAnswer: [
        .enqueue: "idle",
        .bytes: "idle",
        .endOfInput: "idle",
        .timerFired: "idle",
        .timeoutAnswered: "await bytes",
        .cancelHead: "cancelled tag 1",
    ],
    .inputClosedWithBytes: [
        .enqueue: "deliver ab → tag 2",
        .bytes: "idle",
        .endOfInput: "idle",
        .timerFired: "idle",
        .timeoutAnswered: "idle",
        .cancelHead: "nothing to cancel",
    ],
]
