public import TetherStore

/// Where a ``NotesServer`` gets the changes it pushes to its subscribers.
///
/// One server on its own store pushes the changes made through it (``local``). Several servers sharing one database
/// each push the changes the database reports, whichever server made them (``feed(_:)``), so that a watcher on any
/// server sees every change, in the order the database committed them:
///
/// ```swift
/// let store = try await PostgresStore<Note>(url: "postgres://notes@db.internal/notes", tableName: "Note")
/// let server = NotesServer(dao: NoteDAO(store: store), changes: .feed { try await store.changes() })
/// ```
public struct NotesChangeSource: Sendable {
    enum Kind: Sendable {
        case local
        case feed(@Sendable () async throws -> AsyncThrowingStream<RecordChange<Note>, any Error>)
    }

    let kind: Kind

    /// The changes made through this server: for a store that no other process writes to (the default).
    public static let local = NotesChangeSource(kind: .local)

    /// The changes that `subscribe`'s stream reports (for example `PostgresStore.changes()`), including those made
    /// through this server, which then pushes nothing by itself.
    ///
    /// An anonymous server subscribes when it starts serving a listener, before it accepts a connection; a server
    /// with accounts subscribes to a user's feed when that user's first connection logs in, before it answers
    /// `authenticated`, and leaves it when the user's last connection ends. When the stream
    /// fails or ends, the server closes every subscribed connection (their clients' change streams end with an
    /// error: they watch again and list to catch up) and subscribes again, once a second, until it succeeds. A
    /// client's subscribe request that arrives meanwhile is answered once the stream listens again, or with
    /// ``NotesError/Code/storeFailure`` after 10 seconds: no subscriber is ever told it is subscribed while changes
    /// go unreported.
    /// - Parameter subscribe: Starts a new stream of changes; it returns once the stream reports every change
    ///   committed afterwards.
    public static func feed(
        _ subscribe: @escaping @Sendable () async throws -> AsyncThrowingStream<RecordChange<Note>, any Error>
    ) -> NotesChangeSource {
        NotesChangeSource(kind: .feed(subscribe))
    }
}

extension NoteChange {
    /// The notes protocol's name for a store's change.
    init(_ change: RecordChange<Note>) {
        switch change {
        case .inserted(let note): self = .added(note)
        case .updated(let note): self = .edited(note)
        case .deleted(let id): self = .removed(id)
        }
    }
}
