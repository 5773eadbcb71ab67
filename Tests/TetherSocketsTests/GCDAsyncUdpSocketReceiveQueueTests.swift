import NIOCore
import Testing

@testable import TetherSockets

struct GCDAsyncUdpSocketReceiveQueueTests {
    private func datagram(_ text: String, from port: Int = 5_000) throws -> AddressedEnvelope<ByteBuffer> {
        AddressedEnvelope(
            remoteAddress: try SocketAddress(ipAddress: "127.0.0.1", port: port),
            data: ByteBuffer(string: text)
        )
    }

    private func text(_ envelope: AddressedEnvelope<ByteBuffer>?) -> String? {
        envelope.map { String(buffer: $0.data) }
    }

    @Test("nothing is taken while receiving is off, and nothing is read")
    func nothingIsTakenWhileOff() throws {
        var queue = GCDAsyncUdpSocket.ReceiveQueue()
        queue.arrived(try datagram("early"))
        #expect(!queue.wantsReads)
        #expect(queue.next() == nil)
        #expect(queue.buffered.count == 1)
    }

    @Test("receive-once delivers one datagram; the rest waits for the next receive")
    func receiveOnceStopsAfterOne() throws {
        var queue = GCDAsyncUdpSocket.ReceiveQueue()
        for word in ["one", "two"] { queue.arrived(try datagram(word)) }
        queue.setMode(.once)
        #expect(queue.wantsReads)
        #expect(text(queue.next()) == "one")
        queue.delivered()
        #expect(queue.mode == .off)
        #expect(queue.next() == nil)
        queue.setMode(.once)
        #expect(text(queue.next()) == "two")
    }

    @Test("continuous receiving delivers everything until paused; the modes switch each other")
    func continuousUntilPaused() throws {
        var queue = GCDAsyncUdpSocket.ReceiveQueue()
        queue.setMode(.once)
        queue.setMode(.continuous)
        for word in ["a", "b", "c"] { queue.arrived(try datagram(word)) }
        #expect(text(queue.next()) == "a")
        queue.delivered()
        #expect(queue.mode == .continuous)
        queue.setMode(.off)
        #expect(queue.next() == nil)
        queue.setMode(.continuous)
        #expect(text(queue.next()) == "b")
    }

    @Test("a connected queue drops datagrams from anyone but the peer")
    func connectedQueueDropsStrangers() throws {
        var queue = GCDAsyncUdpSocket.ReceiveQueue()
        queue.connectedPeer = try SocketAddress(ipAddress: "127.0.0.1", port: 5_000)
        #expect(!queue.arrived(try datagram("stranger", from: 6_000)))
        #expect(queue.arrived(try datagram("peer", from: 5_000)))
        queue.setMode(.continuous)
        #expect(text(queue.next()) == "peer")
        #expect(queue.next() == nil)
    }

    @Test("an asynchronous filter holds the queue until it answers")
    func asynchronousFilterHoldsTheQueue() throws {
        var queue = GCDAsyncUdpSocket.ReceiveQueue()
        queue.setMode(.once)
        for word in ["rejected", "accepted"] { queue.arrived(try datagram(word)) }
        #expect(text(queue.next()) == "rejected")
        queue.filterStarted()
        #expect(queue.next() == nil)
        // The filter said no: receive-once is still on, so the next datagram is taken.
        queue.filterEnded()
        #expect(text(queue.next()) == "accepted")
    }

    @Test("reading stops when the buffer holds its limit and resumes as it drains")
    func readingStopsAtTheLimit() throws {
        var queue = GCDAsyncUdpSocket.ReceiveQueue()
        queue.setMode(.continuous)
        for index in 0..<GCDAsyncUdpSocket.ReceiveQueue.readLimit { queue.arrived(try datagram("\(index)")) }
        #expect(!queue.wantsReads)
        _ = queue.next()
        #expect(queue.wantsReads)
        queue.removeAll()
        #expect(queue.buffered.isEmpty)
        #expect(!queue.wantsReads)
    }
}
