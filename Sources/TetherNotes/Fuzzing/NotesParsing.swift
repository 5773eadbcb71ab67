public import NIOCore
import TetherCore
public import TetherStore

/// Entry points into the server's side of the notes protocol, for the libFuzzer target in `Fuzz/`
/// (`@_spi(Fuzzing) import TetherNotes`). Each runs the code a server runs on a connection, unchanged. Not for
/// applications: this interface may change at any time.
@_spi(Fuzzing)
public enum NotesParsing {
    /// What a server session does with one frame whose payload is `payload`, on a server whose payloads are at most
    /// `maxPayloadLength` bytes.
    /// - Returns: the payloads of the replies it sends at once; whether it asks the store or the change feed for
    ///   something (to be answered later); whether the connection stays open.
    public static func serverSession(
        receiving payload: ByteBuffer,
        maxPayloadLength: Int
    ) -> (replies: [ByteBuffer], asksForMore: Bool, isOpen: Bool) {
        var session = NotesServerSession(maxPayloadLength: maxPayloadLength)
        var replies: [ByteBuffer] = []
        var asksForMore = false
        for action in session.received(STXFrame(destination: 1, source: 2, payload: payload)) {
            switch action {
            case .send(let frame): replies.append(frame.payload)
            case .perform, .subscribe, .authenticate: asksForMore = true
            case .publish, .close: break
            }
        }
        return (replies, asksForMore, session.isOpen)
    }

    /// The payloads a server session answers a list with, when the store holds `notes`.
    public static func serverList(_ notes: [Note], requestID: UInt32, maxPayloadLength: Int) -> [ByteBuffer] {
        var session = NotesServerSession(maxPayloadLength: maxPayloadLength)
        return session.stored(requestID: requestID, .success(.notes(notes))).compactMap { action in
            if case .send(let frame) = action { frame.payload } else { nil }
        }
    }
}
