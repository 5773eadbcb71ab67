import Foundation
import NIOCore
import Testing
import TetherConcurrency
import TetherCore
import TetherStore

@testable import TetherNotes

/// The frames waiting for one connection, and the hub that fills them: a client that does not read cannot grow the
/// server's memory past the outbox's byte limits; a server that loses its feed ends every subscriber.
@Suite("NotesOutbox and NotesChangeHub, without I/O")
struct NotesOutboxTests {
    static func frame(_ number: Int) -> STXFrame {
        STXFrame(destination: 1, source: 2, payload: ByteBuffer(integer: UInt32(number)))
    }

    /// A frame of `bytes` payload bytes whose first 4 say `number`.
    static func bigFrame(_ number: Int, bytes: Int = 60_000) -> STXFrame {
        var payload = ByteBuffer(integer: UInt32(number))
        payload.writeRepeatingByte(0, count: bytes - 4)
        return STXFrame(destination: 1, source: 2, payload: payload)
    }

    static func number(_ frame: STXFrame?) -> Int? {
        frame.map { Int($0.payload.getInteger(at: 0, as: UInt32.self)!) }
    }

    @Test func pushesPastTheByteLimitEndTheOutboxAfterTheFramesItHeld() async {
        let outbox = NotesOutbox()
        let fitting = NotesOutbox.limit / NotesOutbox.size(of: Self.bigFrame(0))
        for number in 0..<fitting { outbox.send(Self.bigFrame(number)) }
        #expect(outbox.waitingBytes <= NotesOutbox.limit)
        // The push over the limit is dropped and the outbox ends: the writer sends what was queued, then closes.
        outbox.send(Self.bigFrame(99_999))
        outbox.send(Self.frame(100_000))
        var received: [Int] = []
        while let frame = await outbox.next() { received.append(Self.number(frame)!) }
        #expect(received == Array(0..<fitting))
    }

    @Test func manySmallPushesUnderTheLimitStayOpen() async {
        let outbox = NotesOutbox()
        for number in 0..<20_000 { outbox.send(Self.frame(number)) }
        for number in 0..<20_000 { #expect(Self.number(await outbox.next()) == number) }
        outbox.finish()
        #expect(await outbox.next() == nil)
    }

    @Test func aReplyWaitsWhileTheHighWaterMarkIsReachedAndGoesOnOnceTheWriterTakesFrames() async {
        let outbox = NotesOutbox()
        var queued = 0
        while outbox.waitingBytes < NotesOutbox.highWater {
            await outbox.reply(Self.bigFrame(queued))
            queued += 1
        }
        let (replied, done) = AsyncStream.makeStream(of: Void.self)
        let last = queued
        let waiting = Task {
            await outbox.reply(Self.bigFrame(last))
            done.finish()
        }
        // The reply is not queued while the outbox is full: the writer's frames are only those queued before it.
        #expect(outbox.waitingBytes < NotesOutbox.highWater + NotesOutbox.size(of: Self.bigFrame(0)))
        #expect(Self.number(await outbox.next()) == 0)
        for await _ in replied {}
        await waiting.value
        var rest: [Int] = []
        outbox.finish()
        while let frame = await outbox.next() { rest.append(Self.number(frame)!) }
        #expect(rest == Array(1...queued))
    }

    @Test func aReplyWaitingForRoomReturnsWhenTheOutboxEnds() async {
        let outbox = NotesOutbox()
        while outbox.waitingBytes < NotesOutbox.highWater { await outbox.reply(Self.bigFrame(0)) }
        let waiting = Task { await outbox.reply(Self.bigFrame(1)) }
        outbox.finish()
        await waiting.value
    }

    /// An outbox whose direct writes are recorded in `log` ("write N" when one begins, "written N" when it ends), each
    /// announced on `began` and held until `release` yields its outcome (when given).
    static func recordingOutbox(
        log: LockedBox<[String]>,
        began: AsyncStream<Void>.Continuation? = nil,
        release: AsyncStream<Bool>? = nil
    ) -> NotesOutbox {
        NotesOutbox { frame in
            log.withLock { $0.append("write \(number(frame)!)") }
            began?.yield()
            guard let release else { return true }
            var outcomes = release.makeAsyncIterator()
            let succeeded = await outcomes.next() ?? false
            log.withLock { $0.append("written \(number(frame)!)") }
            return succeeded
        }
    }

    @Test func aReplyWithNothingAheadIsWrittenByTheTaskThatMadeIt() async {
        let log = LockedBox<[String]>([])
        let outbox = Self.recordingOutbox(log: log)
        await outbox.reply(Self.frame(1))
        await outbox.reply(Self.frame(2))
        // Written before `reply` returned, by its caller: nothing was queued for the writer task.
        #expect(log.withLock { $0 } == ["write 1", "write 2"])
        #expect(outbox.peakBytes == 0)
        outbox.finish()
        #expect(await outbox.next() == nil)
    }

    @Test func framesArrivingDuringADirectWriteGoOutAfterItThroughTheWriter() async {
        let log = LockedBox<[String]>([])
        let (began, beginning) = AsyncStream.makeStream(of: Void.self)
        let (release, releasing) = AsyncStream.makeStream(of: Bool.self)
        let outbox = Self.recordingOutbox(log: log, began: beginning, release: release)
        let replying = Task { await outbox.reply(Self.frame(1)) }
        for await _ in began { break }
        // Frame 1 is being written at once; a push and a second reply arrive meanwhile: both wait behind it.
        outbox.send(Self.frame(2))
        await outbox.reply(Self.frame(3))
        #expect(outbox.waitingBytes == 2 * NotesOutbox.size(of: Self.frame(0)))
        let writer = Task {
            var taken: [Int] = []
            while let frame = await outbox.next() {
                log.withLock { $0.append("writer \(Self.number(frame)!)") }
                taken.append(Self.number(frame)!)
            }
            return taken
        }
        releasing.yield(true)
        await replying.value
        outbox.finish()
        #expect(await writer.value == [2, 3])
        #expect(log.withLock { $0 } == ["write 1", "written 1", "writer 2", "writer 3"])
    }

    @Test func aFailedDirectWriteEndsTheOutbox() async {
        let log = LockedBox<[String]>([])
        let (release, releasing) = AsyncStream.makeStream(of: Bool.self)
        let outbox = Self.recordingOutbox(log: log, release: release)
        releasing.yield(false)
        await outbox.reply(Self.frame(1))
        // The connection failed: later frames are dropped and the writer task ends at once.
        await outbox.reply(Self.frame(2))
        outbox.send(Self.frame(3))
        #expect(await outbox.next() == nil)
        #expect(log.withLock { $0 } == ["write 1", "written 1"])
    }

    @Test func theHubAddressesEachSubscribersFramesAndClosesThemAll() async throws {
        let hub = NotesChangeHub()
        let (first, second) = (NotesOutbox(), NotesOutbox())
        hub.subscribe(1, destination: 9, source: 1, outbox: first)
        hub.subscribe(2, destination: 7, source: 3, outbox: second)
        #expect(hub.count == 2)
        let note = Note(content: "pushed")
        hub.publish(.added(note))
        hub.closeAll()
        #expect(hub.count == 0)
        hub.publish(.removed(note.id))  // after closeAll: nobody is left to get it
        for (outbox, address) in [(first, (9, 1)), (second, (7, 3))] {
            var frames: [STXFrame] = []
            while let frame = await outbox.next() { frames.append(frame) }
            #expect(frames.count == 1)
            #expect(frames.first?.destination == UInt16(address.0) && frames.first?.source == UInt16(address.1))
            let decoded = try NotesWireFormat.decode(try #require(frames.first).payload)
            #expect(decoded.message == .changed(.added(note)))
        }
    }
}
