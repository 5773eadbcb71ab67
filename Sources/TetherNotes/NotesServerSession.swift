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
        /// Push every later change to this client, in frames addressed so, then hand the outcome to
        /// ``subscription(requestID:isSubscribed:)``.
        case subscribe(requestID: UInt32, destination: UInt16, source: UInt16)
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
    /// The largest payload this server reads and writes.
    private let maxPayloadLength: Int
    /// The longest text a reply of this server can carry with its note.
    private var maxTextLength: Int { NotesWireFormat.maxTextLength(forPayloadLength: maxPayloadLength) }

    /// A session that must authenticate first (`requiresAuthentication`), or one open at once (anonymous, loopback),
    /// whose frames carry at most `maxPayloadLength` bytes of payload (at least ``NotesServer/minPayloadLength``).
    init(requiresAuthentication: Bool = false, maxPayloadLength: Int = NotesWireFormat.maxPayloadLength) {
        state = requiresAuthentication ? .awaitingCredentials : .open(subscribed: false)
        self.maxPayloadLength = maxPayloadLength
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
            // The request id is answered whenever the payload has one, so that the client's request fails alone.
            return [reply(NotesWireFormat.requestID(of: frame.payload) ?? 0, .failed(error))]
        }
        switch message {
        case .list: return [.perform(requestID: requestID, .list)]
        case .add(let text):
            if let tooLong = refusal(of: text) { return [reply(requestID, .failed(tooLong))] }
            return [.perform(requestID: requestID, .add(text))]
        case .edit(let id, let text):
            if let tooLong = refusal(of: text) { return [reply(requestID, .failed(tooLong))] }
            return [.perform(requestID: requestID, .edit(id, text))]
        case .remove(let id): return [.perform(requestID: requestID, .remove(id))]
        case .subscribe:
            if subscribed { return [reply(requestID, .subscribed)] }
            return [.subscribe(requestID: requestID, destination: destination, source: source)]
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
            let pages = NotesWireFormat.pages(of: notes, maxPayloadLength: maxPayloadLength)
            // A note stored by other means with a text too long for any reply: the list fails, naming it.
            if let tooLong = notes.first(where: { $0.content.utf8.count > maxTextLength }) {
                return [reply(requestID, .failed(tooLarge(tooLong)))]
            }
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

    /// The subscription of request `requestID` is in place (every later change is pushed), or could not be made
    /// (a change feed that does not listen).
    mutating func subscription(requestID: UInt32, isSubscribed: Bool) -> [Action] {
        guard case .open = state else { return [] }
        guard isSubscribed else {
            let error = NotesError(
                code: .storeFailure,
                message: "the change feed is not listening; subscribe again later"
            )
            return [reply(requestID, .failed(error))]
        }
        state = .open(subscribed: true)
        return [reply(requestID, .subscribed)]
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

    /// The error answering an add or an edit of `text`, when no reply of this server could carry its note.
    private func refusal(of text: String) -> NotesError? {
        let length = text.utf8.count
        guard length > maxTextLength else { return nil }
        return NotesError(
            code: .tooLarge,
            message: "a text of \(length) bytes; this server takes at most \(maxTextLength)"
        )
    }

    private func tooLarge(_ note: Note) -> NotesError {
        NotesError(
            code: .tooLarge,
            message: "note \(note.id.uuidString) has a text of \(note.content.utf8.count) bytes; "
                + "at most \(maxTextLength) fit in a reply"
        )
    }

    private func reply(_ requestID: UInt32, _ message: NotesMessage) -> Action {
        let payload: ByteBuffer
        if case .failed(let error) = message {
            payload = failed(error, requestID: requestID)
        } else {
            do throws(NotesError) {
                let encoded = try NotesWireFormat.encode(message, requestID: requestID)
                guard encoded.readableBytes <= maxPayloadLength else {
                    throw NotesError(code: .tooLarge, message: "a reply of \(encoded.readableBytes) bytes")
                }
                payload = encoded
            } catch {
                // A note kept by the store with a text too long for a frame (added locally): the request fails.
                var failure = error
                switch message {
                case .added(let note), .edited(let note), .changed(.added(let note)), .changed(.edited(let note)):
                    failure = tooLarge(note)
                default: break
                }
                payload = failed(failure, requestID: requestID)
            }
        }
        return .send(STXFrame(destination: destination, source: source, payload: payload))
    }

    /// An error reply cut to fit this server's payloads (its message shortened).
    private func failed(_ error: NotesError, requestID: UInt32) -> ByteBuffer {
        var error = error
        error.message = NotesWireFormat.prefix(of: error.message, maxBytes: max(0, maxPayloadLength - 7))
        return (try? NotesWireFormat.encode(.failed(error), requestID: requestID)) ?? ByteBuffer()
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
