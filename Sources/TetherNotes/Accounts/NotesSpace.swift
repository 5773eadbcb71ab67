public import TetherStore

/// One user's notes, as a server serves them: their store and where the changes pushed to their watchers come from.
public struct NotesSpace: Sendable {
    /// The user's notes.
    public var store: any RecordStore<Note>
    /// The changes pushed to the user's watchers: ``NotesChangeSource/local`` for a store that only this server
    /// writes, or a feed of the user's table when several servers share the database.
    public var changes: NotesChangeSource

    /// A user's notes in `store`, with the changes of `changes`.
    public init(store: any RecordStore<Note>, changes: NotesChangeSource = .local) {
        self.store = store
        self.changes = changes
    }
}
