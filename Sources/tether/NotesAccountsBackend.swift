import Foundation
import TetherNotes
import TetherPostgres
import TetherStore

/// Where `tether notes user` and `tether serve --notes` keep the accounts: `NotesAccounts.sqlite3` in a folder, or
/// tables `notes_users`, `notes_tokens` and one `notes_<key>` per user in PostgreSQL.
enum NotesAccountsBackend {
    /// The accounts in `dir` (default: the tether app's Documents folder), or in the database at `postgres`.
    static func open(
        dir: String?,
        postgres: String?,
        passwordIterations: Int = PasswordVerifier.defaultIterations
    ) async throws -> NotesAccounts {
        if let postgres { return try await openPostgres(url: postgres, passwordIterations: passwordIterations) }
        return try NotesAccounts.sqlite(directory: try folder(dir), passwordIterations: passwordIterations)
    }

    /// `--dir`, or the tether app's Documents folder.
    static func folder(_ dir: String?) throws -> URL {
        if let dir { return URL(fileURLWithPath: dir, isDirectory: true) }
        let directories = try AppDirectories(appName: "tether")
        try directories.createDirectories()
        return directories.documents
    }

    /// Accounts in PostgreSQL: each user's notes in a table of their own, whose changes every server hears on that
    /// table's own channel.
    static func openPostgres(url: String, passwordIterations: Int) async throws -> NotesAccounts {
        let pool = try PostgresPool(url: url)
        return NotesAccounts(
            users: try await PostgresStore<NotesUser>(pool: pool, tableName: "notes_users"),
            tokens: try await PostgresStore<NotesAccessToken>(pool: pool, tableName: "notes_tokens"),
            passwordIterations: passwordIterations,
            notes: { user in
                let store = try await PostgresStore<Note>(pool: pool, tableName: user.notesTable)
                return NotesSpace(store: store, changes: .feed { try await store.changes() })
            },
            dropNotes: { user in try await PostgresStore<Note>(pool: pool, tableName: user.notesTable).drop() }
        )
    }
}
