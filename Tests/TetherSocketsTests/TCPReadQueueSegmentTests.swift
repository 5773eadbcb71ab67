import NIOCore
import Testing

@testable import TetherSockets

/// The read queue over socket reads kept whole (``ReceiveBuffer``): a read of what is available takes one socket
/// read as it came, without a copy; length and separator reads, frames, the bytes a close carries and the pause
/// threshold see every byte.
struct TCPReadQueueSegmentTests {
    private typealias Queue = TCPReadQueue<String>

    private var large: Int { ReceiveBuffer.joinedBelow }

    private func read(_ count: Int, of byte: UInt8) -> ByteBuffer {
        ByteBuffer(repeating: byte, count: count)
    }

    private func address(_ buffer: ByteBuffer) -> UInt {
        buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
    }

    /// The bytes of the next action when it delivers; nil otherwise.
    private func nextDelivery(_ queue: inout Queue) -> ByteBuffer? {
        guard case .deliver(let bytes, _) = queue.next() else { return nil }
        queue.delivered()
        return bytes
    }

    private func delegate(_ tag: Int) -> ReadWaiter<String> { .delegate(tag: tag, destination: nil) }

    @Test func availableReadsTakeTheSocketsReadsOneByOneWithoutACopy() throws {
        var q = Queue(policy: .delegateFace)
        let first = read(large, of: 1)
        let second = read(large + 7, of: 2)
        q.received(first)
        q.received(second)
        _ = q.enqueue(id: 1, kind: .available(maxLength: 0), timeout: nil, waiter: delegate(1))
        _ = q.enqueue(id: 2, kind: .available(maxLength: 0), timeout: nil, waiter: delegate(2))
        let one = try #require(nextDelivery(&q))
        let two = try #require(nextDelivery(&q))
        #expect(one.readableBytes == large)
        #expect(address(one) == address(first))
        #expect(two.readableBytes == large + 7)
        #expect(address(two) == address(second))
        #expect(q.bufferedBytes == 0)
    }

    @Test func aLengthReadAcrossSocketReadsGetsTheBytesJoinedInOrder() throws {
        var q = Queue(policy: .delegateFace)
        q.received(read(large, of: 1))
        q.received(read(large, of: 2))
        q.received(read(large, of: 3))
        _ = q.enqueue(id: 1, kind: .length(2 * large + 1), timeout: nil, waiter: delegate(1))
        let bytes = try #require(nextDelivery(&q))
        let expected = Array(repeating: UInt8(1), count: large) + Array(repeating: 2, count: large) + [3]
        #expect(bytes.getBytes(at: bytes.readerIndex, length: bytes.readableBytes) == expected)
        #expect(q.bufferedBytes == large - 1)
    }

    @Test func aLengthReadAcrossSocketReadsCopiesOnlyItsOwnBytes() throws {
        // The seed's pattern: a header read across the boundary of two socket reads, then the rest of the stream.
        var q = Queue(policy: .delegateFace)
        var first = read(large, of: 1)
        first.writeString("HEA")
        var second = ByteBuffer(string: "DER")
        second.writeRepeatingByte(2, count: large)
        q.received(first)
        q.received(second)
        _ = q.enqueue(id: 1, kind: .length(large), timeout: nil, waiter: delegate(1))
        _ = q.enqueue(id: 2, kind: .length(6), timeout: nil, waiter: delegate(2))
        _ = q.enqueue(id: 3, kind: .available(maxLength: 0), timeout: nil, waiter: delegate(3))
        _ = try #require(nextDelivery(&q))
        let header = try #require(nextDelivery(&q))
        #expect(String(buffer: header) == "HEADER")
        let rest = try #require(nextDelivery(&q))
        #expect(rest.readableBytes == large)
        #expect(address(rest) == address(second) + 3)  // not copied
    }

    @Test func aSeparatorThatStraddlesTwoSocketReadsIsFound() throws {
        var q = Queue(policy: .delegateFace)
        var first = read(large, of: 0x61)
        first.writeInteger(UInt8(0x0D))
        var second = ByteBuffer(integer: UInt8(0x0A))
        second.writeRepeatingByte(0x62, count: large)
        q.received(first)
        q.received(second)
        _ = q.enqueue(id: 1, kind: .separator([0x0D, 0x0A], maxLength: 0), timeout: nil, waiter: delegate(1))
        let line = try #require(nextDelivery(&q))
        #expect(line.readableBytes == large + 2)
        #expect(q.bufferedBytes == large)
    }

    @Test func partialProgressCountsEveryByteReceived() {
        var q = Queue(policy: .delegateFace)
        _ = q.enqueue(id: 1, kind: .length(4 * large), timeout: nil, waiter: delegate(1))
        #expect(q.next().isAwaitBytes)
        q.received(read(large, of: 1))
        q.received(read(large, of: 2))
        guard case .partial(let tag, let length) = q.next() else {
            Issue.record("expected partial progress")
            return
        }
        #expect(tag == 1)
        #expect(length == 2 * large)
        #expect(q.progress?.bytesDone == 2 * large)
    }

    @Test func aSeparatorPastItsMaximumAcrossSocketReadsIsMaxedOut() {
        var q = Queue(policy: .asyncFace)
        q.received(read(large, of: 1))
        q.received(read(large, of: 2))
        _ = q.enqueue(id: 1, kind: .separator([0x0A], maxLength: large + 10), timeout: nil, waiter: .task("t"))
        guard case .fail(_, let error) = q.next() else {
            Issue.record("expected the read to fail")
            return
        }
        #expect((error as? GCDAsyncSocketError)?.code == .readMaxedOut)
        #expect(q.bufferedBytes == 2 * large)  // nothing lost
    }

    @Test func atTheEndOfTheStreamAvailableReadsGetEveryByteBehindTheFrontBeforeTheEnd() throws {
        var q = Queue(policy: .asyncFace)
        q.received(read(large, of: 1))
        q.received(read(large, of: 2))
        q.endOfInput()
        for task in ["a", "b", "c"] {
            _ = q.enqueue(
                id: UInt64(task.unicodeScalars.first!.value),
                kind: .available(maxLength: 0),
                timeout: nil,
                waiter: .task(task)
            )
        }
        let first = try #require(nextDelivery(&q))
        let second = try #require(nextDelivery(&q))
        #expect(first.getInteger(at: first.readerIndex, as: UInt8.self) == 1)
        #expect(second.getInteger(at: second.readerIndex, as: UInt8.self) == 2)
        guard case .endOfStream(let task) = q.next() else {
            Issue.record("expected the end of the stream")
            return
        }
        #expect(task == "c")
    }

    @Test func theBytesACloseCarriesAreEveryUnreadByteInOrder() {
        var q = Queue(policy: .delegateFace)
        q.received(ByteBuffer(string: "ab"))
        q.received(read(large, of: 2))
        q.received(read(large, of: 3))
        #expect(q.bufferedBytes == 2 + 2 * large)
        let unread = q.takeBuffer()
        #expect(unread.readableBytes == 2 + 2 * large)
        #expect(unread.getString(at: unread.readerIndex, length: 2) == "ab")
        #expect(unread.getInteger(at: unread.readerIndex + 2 + large, as: UInt8.self) == 3)
        #expect(q.bufferedBytes == 0)
    }

    @Test func aReadServedOffTheLoopTakesOneSocketReadOrJoinsForALength() throws {
        var q = Queue(policy: .delegateFace)
        let first = read(large, of: 1)
        q.received(first)
        q.received(read(large, of: 2))
        let taken = q.takeIfReady(.available(maxLength: 0))
        let available = try #require(taken)
        #expect(address(available) == address(first))
        q.received(read(large, of: 3))
        let joined = q.takeIfReady(.length(large + 1))
        let length = try #require(joined)
        #expect(length.getInteger(at: length.readerIndex + large, as: UInt8.self) == 3)
        let tooLong = q.takeIfReady(.length(large))
        #expect(tooLong == nil)
        #expect(q.bufferedBytes == large - 1)
    }
}

extension TCPReadQueue.Action {
    fileprivate var isAwaitBytes: Bool {
        if case .awaitBytes = self { return true }
        return false
    }
}
