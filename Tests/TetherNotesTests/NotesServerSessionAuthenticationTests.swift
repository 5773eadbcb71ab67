import Foundation
import NIOCore
import Testing
import TetherCore
import TetherStore

@testable import TetherNotes

@Suite("NotesServerSession with accounts: the authentication phase, event by event, without I/O")
struct NotesServerSessionAuthenticationTests {
    typealias Action = NotesServerSession.Action

    static let alice = NotesCredentials.password(user: "alice", "secret")

    func frame(_ message: NotesMessage, id requestID: UInt32) throws -> STXFrame {
        STXFrame(destination: 1, source: 9, payload: try NotesWireFormat.encode(message, requestID: requestID))
    }

    func reply(_ message: NotesMessage, id requestID: UInt32) throws -> Action {
        .send(STXFrame(destination: 9, source: 1, payload: try NotesWireFormat.encode(message, requestID: requestID)))
    }

    func refused(_ code: NotesError.Code, _ message: String, id: UInt32) throws -> [Action] {
        [try reply(.failed(NotesError(code: code, message: message)), id: id), .close]
    }

    @Test(
        "any first request but authenticate is refused notAuthenticated with its id, then closed",
        arguments: [NotesMessage.list, .add("x"), .edit(UUID(), "y"), .remove(UUID()), .subscribe, .authenticated]
    )
    func anyOtherFirstRequestIsRefused(request: NotesMessage) throws {
        var session = NotesServerSession(requiresAuthentication: true)
        #expect(!session.isServing)
        #expect(
            session.received(try frame(request, id: 4))
                == (try refused(.notAuthenticated, "the first request must be authenticate", id: 4))
        )
        #expect(!session.isOpen)
        #expect(session.received(try frame(.authenticate(Self.alice), id: 5)).isEmpty)
    }

    @Test("a first frame that is no message, or a bad checksum, closes: nothing but one request before logging in")
    func unreadableFirstFramesClose() throws {
        var garbage = NotesServerSession(requiresAuthentication: true)
        #expect(
            garbage.received(STXFrame(destination: 1, source: 9, bytes: [0x42]))
                == (try refused(.notAuthenticated, "the first request must be authenticate", id: 0))
        )
        var crc = NotesServerSession(requiresAuthentication: true)
        let actions = crc.framingFailed(FramingError(code: .checksumMismatch, message: "bad"))
        #expect(actions.last == .close && !crc.isOpen)
    }

    @Test("authenticate is checked; meanwhile any frame closes; success serves, failure answers and closes")
    func authenticateThenServe() throws {
        var session = NotesServerSession(requiresAuthentication: true)
        #expect(
            session.received(try frame(.authenticate(Self.alice), id: 1)) == [.authenticate(requestID: 1, Self.alice)]
        )
        #expect(session.authenticated(requestID: 1, .success(())) == [try reply(.authenticated, id: 1)])
        #expect(session.isServing)
        #expect(session.received(try frame(.list, id: 2)) == [.perform(requestID: 2, .list)])
        // A second authenticate cannot rebind the session to another user.
        #expect(
            session.received(try frame(.authenticate(.password(user: "bob", "x")), id: 3))
                == [try reply(.failed(NotesError(code: .unknownMessage, message: "already authenticated")), id: 3)]
        )
        #expect(session.isServing)

        var refusedSession = NotesServerSession(requiresAuthentication: true)
        _ = refusedSession.received(try frame(.authenticate(Self.alice), id: 1))
        let failure = NotesError(code: .authenticationFailed, message: "authentication failed")
        #expect(
            refusedSession.authenticated(requestID: 1, .failure(failure)) == [
                try reply(.failed(failure), id: 1), .close,
            ]
        )
        #expect(!refusedSession.isOpen)

        var eager = NotesServerSession(requiresAuthentication: true)
        _ = eager.received(try frame(.authenticate(Self.alice), id: 1))
        #expect(
            eager.received(try frame(.list, id: 2))
                == (try refused(.notAuthenticated, "a request while the credentials are checked", id: 0))
        )
        #expect(eager.authenticated(requestID: 1, .success(())).isEmpty)
    }

    @Test("a timeout answers timedOut and closes, in any open state")
    func timeouts() throws {
        var waiting = NotesServerSession(requiresAuthentication: true)
        // No frame came: the reply goes to address 0 from address 0.
        let payload = try NotesWireFormat.encode(.failed(NotesError(code: .timedOut, message: "slow")), requestID: 0)
        #expect(waiting.timedOut("slow") == [.send(STXFrame(destination: 0, source: 0, payload: payload)), .close])
        #expect(waiting.timedOut("again").isEmpty)
    }

    @Test("credentials round-trip on the wire and never show their secret in a description")
    func credentialsOnTheWire() throws {
        for credentials in [Self.alice, .token(user: "bob", "tok_123")] {
            let payload = try NotesWireFormat.encode(.authenticate(credentials), requestID: 7)
            let (id, message) = try NotesWireFormat.decode(payload)
            #expect(id == 7 && message == .authenticate(credentials))
            let shown = "\(message) \(String(reflecting: message)) \(credentials)"
            #expect(!shown.contains("secret") && !shown.contains("tok_123"))
        }
        // A method the protocol does not have, an empty or long name, cut-short bodies.
        for body: [UInt8] in [[3, 1, 0x61, 0x78], [1, 0, 0x78], [1, 5, 0x61], [1], [], [1, 1, 0x61]] {
            let error = #expect(throws: NotesError.self) {
                try NotesWireFormat.decode(ByteBuffer(bytes: [0x06, 1, 0, 0, 0] + body))
            }
            #expect(error?.code == .malformedMessage, "\(body)")
        }
        let long = NotesCredentials.password(user: String(repeating: "a", count: 65), "x")
        #expect(throws: NotesError.self) { try NotesWireFormat.encode(.authenticate(long), requestID: 1) }
    }
}
