import Foundation
import NIOCore
import Testing
import TetherCore
import TetherStore

@testable import TetherNotes

/// The frames waiting for one connection, and the hub that fills them: a subscriber that does not read cannot grow
/// the server's memory past the outbox's limit; a server that loses its feed ends every subscriber.
@Suite("NotesOutbox and NotesChangeHub, without I/O")
struct NotesOutboxTests {
    static func frame(_ number: Int) -> STXFrame {
        STXFrame(destination: 1, source: 2, payload: ByteBuffer(integer: UInt32(number)))
    }

    @Test func anOutboxPastItsLimitEndsAfterTheFramesItHeld() async {
        let outbox = NotesOutbox()
        for number in 0...NotesOutbox.limit { outbox.send(Self.frame(number)) }
        // The frame over the limit is dropped and the outbox ends: the writer sends what was queued, then closes.
        outbox.send(Self.frame(99_999))
        var received: [Int] = []
        for await frame in outbox.stream { received.append(Int(frame.payload.getInteger(at: 0, as: UInt32.self)!)) }
        #expect(received == Array(0..<NotesOutbox.limit))
    }

    @Test func anOutboxUnderItsLimitStaysOpen() async {
        let outbox = NotesOutbox()
        for number in 0..<NotesOutbox.limit { outbox.send(Self.frame(number)) }
        var iterator = outbox.stream.makeAsyncIterator()
        for number in 0..<NotesOutbox.limit {
            #expect(await iterator.next().map { Int($0.payload.getInteger(at: 0, as: UInt32.self)!) } == number)
        }
        outbox.send(Self.frame(NotesOutbox.limit))
        #expect(await iterator.next() != nil)
        outbox.finish()
        #expect(await iterator.next() == nil)
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
            for await frame in outbox.stream { frames.append(frame) }
            #expect(frames.count == 1)
            #expect(frames.first?.destination == UInt16(address.0) && frames.first?.source == UInt16(address.1))
            let decoded = try NotesWireFormat.decode(try #require(frames.first).payload)
            #expect(decoded.message == .changed(.added(note)))
        }
    }
}
