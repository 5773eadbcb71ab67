import NIOCore
import TetherCore
import TetherStore

import struct Foundation.UUID

/// The server's side of one connection, as a state machine: frames, framing errors and store results in, actions
/// out. No I/O: ``NotesServer`` executes the actions, and the tests drive the machine by hand.
struct NotesServerSession {
    /// What the I/O must do.
    enum Action: Equatable {
        /// Write this frame to the client.
        case send(STXFrame)
        /// Run this operation on the store, then hand the result to ``stored(requestID:_:)``.
        case perform(requestID: UInt32, Operation)
        /// Push every later change to this client, in frames addressed so.
        case subscribe(destination: UInt16, source: UInt16)
        /// Tell the other subscribers (and other servers) about a change made here.
        case publish(NoteChange)
        /// Check these credentials, then hand the outcome to ``authenticated(requestID:_:)``.
        case authenticate(requestID: UInt32, NotesCredentials)
        /// Close the connection (after the frames sent before this action).
        case close
    }

    /// A store operation a request asks for.
    enum Operation: Equatable {
        case list
        case add(String)
        case edit(UUID, String)
        case remove(UUID)
    }

    private enum State {
        /// The first frame must be an `authenticate` request.
        case awaitingCredentials
        /// The credentials are being checked: no other request is taken meanwhile.
        case authenticating
        case open(subscribed: Bool)
        case closed
    }

    private var state: State

    /// A session that must authenticate first (`requiresAuthentication`), or one open at once (anonymous, loopback).
    init(requiresAuthentication: Bool = false) {
        state = requiresAuthentication ? .awaitingCredentials : .open(subscribed: false)
    }

    /// Whether the session is bound to a user, or anonymous: requests are served.
    var isServing: Bool {
        if case .open = state { true } else { false }
    }

    /// Whether the session is subscribed to changes.
    var isSubscribed: Bool {
        if case .open(subscribed: true) = state { true } else { false }
    }
    /// Replies go back to the sender of the last request, from the address it wrote to.
    private var destination: UInt16 = 0
    private var source: UInt16 = 0

    /// Whether the connection still takes frames.
    var isOpen: Bool {
        if case .closed = state { false } else { true }
    }

    /// A frame arrived.
    mutating func received(_ frame: STXFrame) -> [Action] {
        (destination, source) = (frame.source, frame.destination)
        switch state {
        case .closed: return []
        case .awaitingCredentials: return receivedFirst(frame)
        case .authenticating: return refuse(0, .notAuthenticated, "a request while the credentials are checked")
        case .open(let subscribed): return receivedRequest(frame, subscribed: subscribed)
        }
    }

    /// The credentials were checked: a user (the session serves their notes from now on), or a failure
    /// (`.authenticationFailed`, `.limitExceeded`) that ends the connection.
    mutating func authenticated(requestID: UInt32, _ result: Result<Void, NotesError>) -> [Action] {
        guard case .authenticating = state else { return [] }
        switch result {
        case .success:
            state = .open(subscribed: false)
            return [reply(requestID, .authenticated)]
        case .failure(let error):
            state = .closed
            return [reply(requestID, .failed(error)), .close]
        }
    }

    /// The client took too long (to authenticate, to finish a frame, between requests): the connection ends.
    mutating func timedOut(_ what: String) -> [Action] {
        guard isOpen else { return [] }
        return refuse(0, .timedOut, what)
    }

    private mutating func receivedFirst(_ frame: STXFrame) -> [Action] {
        let decoded: (requestID: UInt32, message: NotesMessage)
        do {
            decoded = try NotesWireFormat.decode(frame.payload)
        } catch {
            return refuse(0, .notAuthenticated, "the first request must be authenticate")
        }
        guard case .authenticate(let credentials) = decoded.message else {
            return refuse(decoded.requestID, .notAuthenticated, "the first request must be authenticate")
        }
        state = .authenticating
        return [.authenticate(requestID: decoded.requestID, credentials)]
    }

    private mutating func refuse(_ requestID: UInt32, _ code: NotesError.Code, _ message: String) -> [Action] {
        state = .closed
        return [reply(requestID, .failed(NotesError(code: code, message: message))), .close]
    }

    private mutating func receivedRequest(_ frame: STXFrame, subscribed: Bool) -> [Action] {
        let requestID: UInt32
        let message: NotesMessage
        do {
            (requestID, message) = try NotesWireFormat.decode(frame.payload)
        } catch {
            return [reply(0, .failed(error))]
        }
        switch message {
        case .list: return [.perform(requestID: requestID, .list)]
        case .add(let text): return [.perform(requestID: requestID, .add(text))]
        case .edit(let id, let text): return [.perform(requestID: requestID, .edit(id, text))]
        case .remove(let id): return [.perform(requestID: requestID, .remove(id))]
        case .subscribe:
            state = .open(subscribed: true)
            let subscribe: [Action] = subscribed ? [] : [.subscribe(destination: destination, source: source)]
            return subscribe + [reply(requestID, .subscribed)]
        case .authenticate:
            return [reply(requestID, .failed(NotesError(code: .unknownMessage, message: "already authenticated")))]
        case .notes, .added, .edited, .removed, .subscribed, .authenticated, .failed, .changed:
            return [
                reply(requestID, .failed(NotesError(code: .unknownMessage, message: "\(kind(of: message)) is a reply")))
            ]
        }
    }

    /// The frame reader failed: a bad checksum costs that frame only (its length was right, so the stream is in
    /// step); anything else means the stream is out of step, and the connection ends after saying why.
    mutating func framingFailed(_ error: FramingError) -> [Action] {
        guard isOpen else { return [] }
        if error.code == .checksumMismatch, isServing {
            return [reply(0, .failed(NotesError(code: .badChecksum, message: error.message)))]
        }
        state = .closed
        if error.code == .truncatedFrame { return [.close] }
        return [reply(0, .failed(NotesError(code: .outOfStep, message: "\(error.code): \(error.message)"))), .close]
    }

    /// The store carried out the operation of request `requestID`: its reply (a list in pages) and, for a change,
    /// its publication.
    mutating func stored(requestID: UInt32, _ result: Result<StoreOutcome, NotesError>) -> [Action] {
        guard case .open = state else { return [] }
        switch result {
        case .failure(let error): return [reply(requestID, .failed(error))]
        case .success(.notes(let notes)):
            let pages = NotesWireFormat.pages(of: notes)
            return pages.indices.map { reply(requestID, .notes(pages[$0], isLast: $0 == pages.count - 1)) }
        case .success(.changed(let change)):
            let message: NotesMessage
            switch change {
            case .added(let note): message = .added(note)
            case .edited(let note): message = .edited(note)
            case .removed(let id): message = .removed(id)
            }
            return [reply(requestID, message), .publish(change)]
        }
    }

    /// The client closed its side, or the connection failed.
    mutating func ended() -> [Action] {
        guard isOpen else { return [] }
        state = .closed
        return [.close]
    }

    /// What a store operation gave.
    enum StoreOutcome: Equatable {
        case notes([Note])
        case changed(NoteChange)
    }

    private func reply(_ requestID: UInt32, _ message: NotesMessage) -> Action {
        let payload: ByteBuffer
        do {
            payload = try NotesWireFormat.encode(message, requestID: requestID)
        } catch {
            // A note kept by the store with a text too long for a frame (added locally): the request fails.
            payload = (try? NotesWireFormat.encode(.failed(error), requestID: requestID)) ?? ByteBuffer()
        }
        return .send(STXFrame(destination: destination, source: source, payload: payload))
    }

    private func kind(of message: NotesMessage) -> String {
        switch message {
        case .notes: "notes"
        case .added: "added"
        case .edited: "edited"
        case .removed: "removed"
        case .subscribed: "subscribed"
        case .authenticated: "authenticated"
        case .failed: "failed"
        case .changed: "changed"
        default: "a request"
        }
    }
}
