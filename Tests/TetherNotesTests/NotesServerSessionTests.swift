import Foundation
import NIOCore
import Testing
import TetherCore
import TetherStore

@testable import TetherNotes

@Suite("NotesServerSession: the server's side of a connection, event by event, without I/O")
struct NotesServerSessionTests {
    typealias Action = NotesServerSession.Action

    static let id = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!

    /// A request frame from device 9 to server address 1.
    func frame(_ message: NotesMessage, id requestID: UInt32) throws -> STXFrame {
        STXFrame(destination: 1, source: 9, payload: try NotesWireFormat.encode(message, requestID: requestID))
    }

    /// A reply frame from address 1 back to device 9.
    func reply(_ message: NotesMessage, id requestID: UInt32) throws -> Action {
        .send(STXFrame(destination: 9, source: 1, payload: try NotesWireFormat.encode(message, requestID: requestID)))
    }

    @Test("each request becomes its store operation, with its request id")
    func requestsBecomeOperations() throws {
        var session = NotesServerSession()
        #expect(session.received(try frame(.list, id: 1)) == [.perform(requestID: 1, .list)])
        #expect(session.received(try frame(.add("a"), id: 2)) == [.perform(requestID: 2, .add("a"))])
        #expect(
            session.received(try frame(.edit(Self.id, "b"), id: 3)) == [.perform(requestID: 3, .edit(Self.id, "b"))]
        )
        #expect(session.received(try frame(.remove(Self.id), id: 4)) == [.perform(requestID: 4, .remove(Self.id))])
        #expect(session.isOpen)
    }

    @Test("subscribe: answered once the subscription is in place; once subscribed, a second subscribe only answers")
    func subscribeOnce() throws {
        var session = NotesServerSession()
        #expect(session.received(try frame(.subscribe, id: 5)) == [.subscribe(requestID: 5, destination: 9, source: 1)])
        #expect(session.subscription(requestID: 5, isSubscribed: true) == [try reply(.subscribed, id: 5)])
        #expect(session.received(try frame(.subscribe, id: 6)) == [try reply(.subscribed, id: 6)])
    }

    @Test("a subscription the change feed cannot take now is answered storeFailure; a later subscribe asks again")
    func aSubscriptionTheFeedCannotTakeFails() throws {
        var session = NotesServerSession()
        #expect(session.received(try frame(.subscribe, id: 5)) == [.subscribe(requestID: 5, destination: 9, source: 1)])
        let refused = session.subscription(requestID: 5, isSubscribed: false)
        guard case .send(let sent) = try #require(refused.first), refused.count == 1 else {
            throw NotesError(code: .notFound, message: "\(refused)")
        }
        #expect(try NotesWireFormat.decode(sent.payload).message.isFailure(.storeFailure))
        #expect(session.received(try frame(.subscribe, id: 6)) == [.subscribe(requestID: 6, destination: 9, source: 1)])
    }

    @Test("a reply sent as a request is unknownMessage, with the request id; the session goes on")
    func repliesAreNotRequests() throws {
        var session = NotesServerSession()
        let actions = session.received(try frame(.subscribed, id: 8))
        guard case .send(let sent) = try #require(actions.first), actions.count == 1 else {
            Issue.record("expected one reply, got \(actions)")
            return
        }
        let (requestID, message) = try NotesWireFormat.decode(sent.payload)
        #expect(requestID == 8)
        guard case .failed(let error) = message else { throw NotesError(code: .malformedMessage, message: "") }
        #expect(error.code == .unknownMessage)
        #expect(session.isOpen)
    }

    @Test("a payload that is not a message: failed with request id 0, and the session goes on")
    func malformedPayload() throws {
        var session = NotesServerSession()
        let actions = session.received(STXFrame(destination: 1, source: 9, bytes: [0x42]))
        guard case .send(let sent) = try #require(actions.first) else { throw NotesError(code: .notFound, message: "") }
        let (requestID, message) = try NotesWireFormat.decode(sent.payload)
        #expect(requestID == 0)
        #expect(message == .failed(NotesError(code: .malformedMessage, message: "a payload of 1 bytes has no header")))
        #expect(session.isOpen)
    }

    @Test("a payload whose request id was read but whose body is malformed is answered with that request id")
    func aMalformedRequestIsAnsweredWithItsRequestID() throws {
        var session = NotesServerSession()
        let actions = session.received(STXFrame(destination: 1, source: 9, bytes: [0x02, 3, 0, 0, 0, 0xC3, 0x28]))
        guard case .send(let sent) = try #require(actions.first), actions.count == 1 else {
            Issue.record("expected one reply, got \(actions)")
            return
        }
        let (requestID, message) = try NotesWireFormat.decode(sent.payload)
        #expect(requestID == 3)
        guard case .failed(let error) = message else { throw NotesError(code: .notFound, message: "\(message)") }
        #expect(error.code == .malformedMessage)
    }

    @Test("a session with a lower payload limit: pages, error replies and refused texts all fit in it")
    func aLowerPayloadLimitShapesEveryReply() throws {
        var session = NotesServerSession(maxPayloadLength: 200)
        let notes = (0..<10).map { Note(content: String(repeating: "n", count: 100 + $0)) }
        let listed = session.stored(requestID: 1, .success(.notes(notes)))
        var received: [Note] = []
        for action in listed {
            guard case .send(let frame) = action else { throw NotesError(code: .notFound, message: "\(action)") }
            #expect(frame.payload.readableBytes <= 200)
            guard case .notes(let page, _) = try NotesWireFormat.decode(frame.payload).message else {
                throw NotesError(code: .notFound, message: "not a page")
            }
            received += page
        }
        #expect(received == notes)
        let refused = session.received(try frame(.add(String(repeating: "x", count: 200 - 33)), id: 2))
        guard case .send(let sent) = try #require(refused.first), refused.count == 1 else {
            throw NotesError(code: .notFound, message: "\(refused)")
        }
        #expect(try NotesWireFormat.decode(sent.payload).message.isFailure(.tooLarge))
        let failure = NotesError(code: .notFound, message: String(repeating: "é", count: 300))
        guard case .send(let reply) = try #require(session.stored(requestID: 3, .failure(failure)).first) else {
            throw NotesError(code: .notFound, message: "no reply")
        }
        #expect(reply.payload.readableBytes <= 200)
        #expect(try NotesWireFormat.decode(reply.payload).message.isFailure(.notFound))
    }

    @Test("framing errors: a bad checksum is answered and read past; out of step is answered, then closed")
    func framingErrors() throws {
        var session = NotesServerSession()
        _ = session.received(try frame(.list, id: 1))
        let crc = session.framingFailed(FramingError(code: .checksumMismatch, message: "checksum 0x00, expected 0xDA"))
        #expect(
            crc == [try reply(.failed(NotesError(code: .badChecksum, message: "checksum 0x00, expected 0xDA")), id: 0)]
        )
        #expect(session.isOpen)
        let garbage = session.framingFailed(FramingError(code: .badStartByte, message: "first byte 0x41"))
        #expect(
            garbage == [
                try reply(.failed(NotesError(code: .outOfStep, message: "badStartByte: first byte 0x41")), id: 0),
                .close,
            ]
        )
        #expect(!session.isOpen)
        #expect(session.received(try frame(.list, id: 2)).isEmpty)
        #expect(session.framingFailed(FramingError(code: .checksumMismatch, message: "")).isEmpty)
    }

    @Test("a stream that ends inside a frame, or the client's close, closes without a reply")
    func endings() {
        var cut = NotesServerSession()
        #expect(cut.framingFailed(FramingError(code: .truncatedFrame, message: "")) == [.close])
        var ended = NotesServerSession()
        #expect(ended.ended() == [.close])
        #expect(ended.ended().isEmpty)
    }

    @Test("store results: a list in pages (the last says so), a change answered and published, a failure answered")
    func storeResults() throws {
        var session = NotesServerSession()
        _ = session.received(try frame(.list, id: 1))
        let notes = (0..<30).map { Note(content: String(repeating: "n", count: 5_000 + $0)) }
        let listed = session.stored(requestID: 1, .success(.notes(notes)))
        let pages = NotesWireFormat.pages(of: notes)
        #expect(
            listed == (try pages.indices.map { try reply(.notes(pages[$0], isLast: $0 == pages.count - 1), id: 1) })
        )
        let note = Note(content: "new")
        #expect(
            session.stored(requestID: 2, .success(.changed(.added(note))))
                == [try reply(.added(note), id: 2), .publish(.added(note))]
        )
        #expect(
            session.stored(requestID: 3, .success(.changed(.removed(Self.id))))
                == [try reply(.removed(Self.id), id: 3), .publish(.removed(Self.id))]
        )
        let missing = NotesError(code: .notFound, message: "no note")
        #expect(session.stored(requestID: 4, .failure(missing)) == [try reply(.failed(missing), id: 4)])
    }

    @Test("a stored note too long for a frame fails its request instead of breaking the connection")
    func oversizedStoredNote() throws {
        var session = NotesServerSession()
        _ = session.received(try frame(.list, id: 1))
        let long = Note(content: String(repeating: "x", count: NotesWireFormat.maxTextLength + 1))
        let actions = session.stored(requestID: 1, .success(.notes([long])))
        guard case .send(let sent) = try #require(actions.first) else { throw NotesError(code: .notFound, message: "") }
        guard case .failed(let error) = try NotesWireFormat.decode(sent.payload).message else {
            throw NotesError(code: .notFound, message: "")
        }
        #expect(error.code == .tooLarge)
    }
}

extension NotesMessage {
    /// Whether this is an error reply with `code`.
    func isFailure(_ code: NotesError.Code) -> Bool {
        if case .failed(let error) = self { error.code == code } else { false }
    }
}
