import Foundation
import NIOCore
import NIOEmbedded
import Testing

@testable import TetherSockets

/// The engine buffers the bytes of one read batch (NIO's reads between two `channelReadComplete`s) and serves
/// the reads they satisfy once the batch ends; any event after the bytes serves them first.
struct SocketEngineReadBatchTests {
    private struct Refused: Error {}

    private func makeEngine() throws -> (EmbeddedChannel, SocketEngine, EngineProbe) {
        let channel = EmbeddedChannel()
        let probe = EngineProbe()
        let engine = SocketEngine(eventLoop: channel.embeddedEventLoop, owner: probe, policy: .delegateFace)
        try channel.pipeline.syncOperations.addHandler(engine)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        _ = engine.enqueueRead(.available(maxLength: 0), timeout: nil, waiter: .delegate(tag: 1, destination: nil))
        return (channel, engine, probe)
    }

    @Test func theReadsOfOneBatchReachAWaitingReadAsOneDelivery() throws {
        let (channel, _, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        channel.pipeline.fireChannelRead(ByteBuffer(string: "ab"))
        channel.pipeline.fireChannelRead(ByteBuffer(string: "cd"))
        channel.pipeline.fireChannelRead(ByteBuffer(string: "ef"))
        #expect(probe.reads.isEmpty)
        channel.pipeline.fireChannelReadComplete()
        #expect(probe.reads.map(\.0) == ["abcdef"])
        #expect(probe.reads.map(\.1) == [1])
    }

    @Test func largeReadsOfOneBatchReachReadsOfWhatIsAvailableOneByOneInOrder() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        let large = ReceiveBuffer.joinedBelow
        channel.pipeline.fireChannelRead(ByteBuffer(string: String(repeating: "a", count: large)))
        channel.pipeline.fireChannelRead(ByteBuffer(string: String(repeating: "b", count: large)))
        channel.pipeline.fireChannelReadComplete()
        // Each socket read as it came (no copy to join them): the second waits for the next read.
        #expect(probe.reads.map(\.0) == [String(repeating: "a", count: large)])
        _ = engine.enqueueRead(.available(maxLength: 0), timeout: nil, waiter: .delegate(tag: 2, destination: nil))
        #expect(probe.reads.map(\.0) == [String(repeating: "a", count: large), String(repeating: "b", count: large)])
        #expect(probe.reads.map(\.1) == [1, 2])
    }

    @Test func partialProgressIsReportedOncePerBatch() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        channel.pipeline.fireChannelRead(ByteBuffer(string: "x"))
        channel.pipeline.fireChannelReadComplete()
        _ = engine.enqueueRead(.length(10), timeout: nil, waiter: .delegate(tag: 2, destination: nil))
        channel.pipeline.fireChannelRead(ByteBuffer(string: "abc"))
        channel.pipeline.fireChannelRead(ByteBuffer(string: "defg"))
        channel.pipeline.fireChannelReadComplete()
        #expect(probe.events.filter { $0.hasPrefix("partial") } == ["partial 7 tag 2"])
        channel.pipeline.fireChannelRead(ByteBuffer(string: "hijk"))
        channel.pipeline.fireChannelReadComplete()
        #expect(probe.reads.map(\.0) == ["x", "abcdefghij"])
    }

    @Test func anErrorAfterBytesOfTheSameBatchDeliversTheBytesFirst() throws {
        let (channel, _, probe) = try makeEngine()
        channel.pipeline.fireChannelRead(ByteBuffer(string: "ab"))
        channel.pipeline.fireErrorCaught(Refused())
        #expect(probe.reads.map(\.0) == ["ab"])
        let closed = try #require(probe.closeError)
        let error = try #require(closed)
        #expect(error.unreadData == nil)
        _ = try? channel.finish()
    }

    @Test func theEndOfInputAfterBytesOfTheSameBatchDeliversTheBytesFirst() throws {
        let (channel, _, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        channel.pipeline.fireChannelRead(ByteBuffer(string: "ab"))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(probe.reads.map(\.0) == ["ab"])
    }

    @Test func theChannelEndingAfterBytesOfTheSameBatchDeliversTheBytesFirst() throws {
        let (channel, _, probe) = try makeEngine()
        channel.pipeline.fireChannelRead(ByteBuffer(string: "ab"))
        channel.pipeline.fireChannelInactive()
        #expect(probe.reads.map(\.0) == ["ab"])
        if case .some(.some(let error)) = probe.closeError {
            #expect(error.unreadData == nil)
        }
        _ = try? channel.finish()
    }
}
