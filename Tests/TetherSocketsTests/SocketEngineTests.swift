import Foundation
import NIOCore
import NIOEmbedded
import Testing

@testable import TetherSockets

/// Drives the engine over an `EmbeddedChannel`: no I/O, time advanced by hand.
final class EngineProbe: SocketEngineOwner {
    var events: [String] = []
    var reads: [(String, Int)] = []
    var closeError: GCDAsyncSocketError??
    var timeoutAnswer: TimeAmount = .zero

    func engineDidActivate(_ engine: SocketEngine) { events.append("active") }
    func engine(_ engine: SocketEngine, didRead bytes: ByteBuffer, tag: Int, destination: CallerBuffer?) {
        reads.append((String(buffer: bytes), tag))
    }
    func engine(_ engine: SocketEngine, didReadPartialDataOfLength length: Int, tag: Int) {
        events.append("partial \(length) tag \(tag)")
    }
    func engine(_ engine: SocketEngine, didWriteDataWithTag tag: Int) { events.append("wrote \(tag)") }
    func engine(_ engine: SocketEngine, didWritePartialDataOfLength length: Int, tag: Int) {
        events.append("partial write \(length)")
    }
    func engine(
        _ engine: SocketEngine,
        shouldTimeout kind: SocketEngine.OperationKind,
        tag: Int,
        elapsed: TimeAmount,
        bytesDone: Int,
        respond: @escaping (TimeAmount) -> Void
    ) {
        events.append("timeout? \(kind) tag \(tag) elapsed \(elapsed.nanoseconds / 1_000_000)ms done \(bytesDone)")
        respond(timeoutAnswer)
    }
    func engineReadStreamDidClose(_ engine: SocketEngine) { events.append("read stream closed") }
    func engineDidSecure(_ engine: SocketEngine, negotiatedProtocol: String?) { events.append("secured") }
    func engine(_ engine: SocketEngine, didReceive trust: TLSPeerTrust, answer: @escaping @Sendable (Bool) -> Void) {
        answer(false)
    }
    func engineDidClose(_ engine: SocketEngine, error: GCDAsyncSocketError?) { closeError = .some(error) }
}

struct SocketEngineTests {
    private func makeEngine(
        policy: SocketEngine.Policy = .delegateFace
    ) throws
        -> (EmbeddedChannel, SocketEngine, EngineProbe)
    {
        let channel = EmbeddedChannel()
        let probe = EngineProbe()
        let engine = SocketEngine(eventLoop: channel.embeddedEventLoop, owner: probe, policy: policy)
        try channel.pipeline.syncOperations.addHandler(engine)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        return (channel, engine, probe)
    }

    @Test func readsCompleteInOrderWithTheirTags() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        _ = engine.enqueueRead(.length(2), timeout: nil, waiter: .delegate(tag: 1, destination: nil))
        _ = engine.enqueueRead(
            .separator([0x0A], maxLength: 0),
            timeout: nil,
            waiter: .delegate(tag: 2, destination: nil)
        )
        try channel.writeInbound(ByteBuffer(string: "abcd\nrest"))
        #expect(probe.reads.map(\.0) == ["ab", "cd\n"])
        #expect(probe.reads.map(\.1) == [1, 2])
        _ = engine.enqueueRead(.available(maxLength: 0), timeout: nil, waiter: .delegate(tag: 3, destination: nil))
        #expect(probe.reads.last?.0 == "rest")
    }

    @Test func partialProgressReportsIncrementsNotTotals() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        _ = engine.enqueueRead(.length(10), timeout: nil, waiter: .delegate(tag: 7, destination: nil))
        try channel.writeInbound(ByteBuffer(string: "abc"))
        try channel.writeInbound(ByteBuffer(string: "defg"))
        try channel.writeInbound(ByteBuffer(string: "hij"))
        #expect(probe.events.filter { $0.hasPrefix("partial") } == ["partial 3 tag 7", "partial 4 tag 7"])
        #expect(probe.reads.map(\.0) == ["abcdefghij"])
    }

    @Test func readTimeoutAsksTheOwnerWithTheElapsedTimeThenCloses() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        probe.timeoutAnswer = .seconds(2)
        _ = engine.enqueueRead(.length(10), timeout: .seconds(1), waiter: .delegate(tag: 4, destination: nil))
        try channel.writeInbound(ByteBuffer(string: "abc"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(probe.events.last == "timeout? read tag 4 elapsed 1000ms done 3")
        probe.timeoutAnswer = .zero
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(probe.events.last == "timeout? read tag 4 elapsed 3000ms done 3")
        let error = try #require(probe.closeError ?? nil)
        #expect(error.code == .readTimeout)
        #expect(error.pendingReadTags == [4])
        #expect(error.unreadData == Data("abc".utf8))
    }

    @Test func asyncFaceTimeoutFailsTheReadAndConsumesNothing() async throws {
        let (channel, engine, _) = try makeEngine(policy: .asyncFace)
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        try channel.writeInbound(ByteBuffer(string: "abc"))
        var caught: (any Error)?
        do {
            _ = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                _ = engine.enqueueRead(.length(5), timeout: .milliseconds(10), waiter: .task(continuation))
                channel.embeddedEventLoop.advanceTime(by: .milliseconds(10))
            }
        } catch {
            caught = error
        }
        #expect((caught as? GCDAsyncSocketError)?.code == .readTimeout)
        let rest = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
            _ = engine.enqueueRead(.available(maxLength: 0), timeout: nil, waiter: .task(continuation))
        }
        #expect(rest.map { String(buffer: $0) } == "abc")
        #expect(channel.isActive)
    }

    @Test func maxedOutSeparatorReadClosesTheDelegateFace() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        _ = engine.enqueueRead(
            .separator([0x0A], maxLength: 4),
            timeout: nil,
            waiter: .delegate(tag: 1, destination: nil)
        )
        try channel.writeInbound(ByteBuffer(string: "abcdef"))
        let error = try #require(probe.closeError ?? nil)
        #expect(error.code == .readMaxedOut)
        #expect(error.unreadData == Data("abcdef".utf8))
    }

    @Test func peerCloseDeliversBufferedBytesFirst() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        try channel.writeInbound(ByteBuffer(string: "abc"))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(probe.closeError == nil)
        _ = engine.enqueueRead(.length(2), timeout: nil, waiter: .delegate(tag: 1, destination: nil))
        #expect(probe.reads.map(\.0) == ["ab"])
        #expect(probe.closeError == nil)
        _ = engine.enqueueRead(.length(2), timeout: nil, waiter: .delegate(tag: 2, destination: nil))
        let error = try #require(probe.closeError ?? nil)
        #expect(error.code == .closed)
        #expect(error.unreadData == Data("c".utf8))
        #expect(error.pendingReadTags == [2])
    }

    @Test func writesCompleteInOrder() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        _ = engine.enqueueWrite(ByteBuffer(string: "one"), timeout: nil, waiter: .delegate(tag: 1))
        _ = engine.enqueueWrite(ByteBuffer(string: "two"), timeout: nil, waiter: .delegate(tag: 2))
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "one"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "two"))
        #expect(probe.events.filter { $0.hasPrefix("wrote") } == ["wrote 1", "wrote 2"])
    }

    @Test func largeWritesReportPartialProgress() throws {
        let (channel, engine, probe) = try makeEngine()
        defer { _ = try? channel.finish() }  // closes the channel: pipeline and engine hold each other until then
        let size = SocketEngine.progressSliceSize * 2 + 10
        _ = engine.enqueueWrite(ByteBuffer(repeating: 1, count: size), timeout: nil, waiter: .delegate(tag: 9))
        channel.embeddedEventLoop.run()
        let slice = SocketEngine.progressSliceSize
        #expect(
            probe.events.filter { $0.hasPrefix("partial write") } == [
                "partial write \(slice)", "partial write \(slice)",
            ]
        )
        #expect(probe.events.last == "wrote 9")
    }
}
