public import TetherStore

public import struct Foundation.UUID

/// A change to the notes of a server, as pushed to its subscribers.
public enum NoteChange: Sendable, Hashable {
    /// A note was added.
    case added(Note)
    /// A note's text was replaced.
    case edited(Note)
    /// The note with this id was removed.
    case removed(UUID)
}
