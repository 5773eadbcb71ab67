public import TetherStore

public import struct Foundation.UUID

/// One message of the notes protocol: the payload of one STX frame (see <doc:NotesProtocol>).
///
/// Requests go from a client to the server, each with a request id of the client's choosing; the server answers each
/// with one reply carrying the same id (a list may take several ``notes(_:isLast:)`` pages). Changes are pushed to
/// subscribers with request id 0.
public enum NotesMessage: Sendable, Hashable {
    // Requests.
    /// Proves who the client is; on a server with accounts, the first request of every connection. Answered by
    /// ``authenticated`` or a ``NotesError/Code/authenticationFailed`` error (then the server closes).
    case authenticate(NotesCredentials)
    /// Asks for every note, oldest first.
    case list
    /// Adds a note with this text; answered by ``added(_:)``.
    case add(String)
    /// Replaces the text of a note; answered by ``edited(_:)`` or a ``NotesError/Code/notFound`` error.
    case edit(UUID, String)
    /// Removes a note; answered by ``removed(_:)`` or a ``NotesError/Code/notFound`` error.
    case remove(UUID)
    /// Asks for every later change; answered by ``subscribed``, then ``changed(_:)`` messages.
    case subscribe

    // Replies.
    /// The credentials of an ``authenticate(_:)`` were accepted: the connection serves that user's notes.
    case authenticated
    /// A page of the notes, oldest first; the last page of a list says so.
    case notes([Note], isLast: Bool)
    /// The note an ``add(_:)`` made (with its id and date).
    case added(Note)
    /// The note an ``edit(_:_:)`` changed.
    case edited(Note)
    /// The id a ``remove(_:)`` removed.
    case removed(UUID)
    /// The subscription is in place: every change after this one is pushed.
    case subscribed
    /// The request failed (or, with request id 0, a frame the server could not read).
    case failed(NotesError)

    // Pushed to subscribers.
    /// A change made by any client of the server (or of another server on the same database).
    case changed(NoteChange)
}
