import Foundation
import TetherNotes
import TetherPostgres
import TetherStore

/// The accounts of a deployment's servers with accounts: one user, `bench`, logging in with a token, whose notes are
/// the deployment's own store, so that the servers with and without accounts serve the same table.
enum BenchAccounts {
    /// The user every client of the servers with accounts logs in as.
    static let user = "bench"

    /// Limits that let every client of a run log in as the one user.
    static let limits = NotesServerLimits(connectionsPerAddress: 4_096, connectionsPerUser: 4_096)

    /// Accounts over `users` and `tokens` whose every user's notes are `notes` (with `changes`).
    static func accounts(
        users: any RecordStore<NotesUser>,
        tokens: any RecordStore<NotesAccessToken>,
        notes: any RecordStore<Note>,
        changes: NotesChangeSource
    ) -> NotesAccounts {
        NotesAccounts(
            users: users,
            tokens: tokens,
            passwordIterations: 1_000,
            notes: { _ in NotesSpace(store: notes, changes: changes) },
            dropNotes: { _ in }
        )
    }

    /// Accounts in a SQLite file of `folder`, the notes in `notes`.
    static func sqlite(in folder: URL, notes: any RecordStore<Note>) throws -> NotesAccounts {
        let url = folder.appendingPathComponent("accounts.sqlite")
        return accounts(
            users: try SQLiteStore<NotesUser>(url: url, tableName: "users"),
            tokens: try SQLiteStore<NotesAccessToken>(url: url, tableName: "tokens"),
            notes: notes,
            changes: .local
        )
    }

    /// Accounts in tables `<table>_users` and `<table>_tokens` of `pool`'s database, the notes in `notes`.
    static func postgres(
        pool: PostgresPool,
        table: String,
        notes: PostgresStore<Note>,
        changes: NotesChangeSource
    ) async throws -> NotesAccounts {
        accounts(
            users: try await PostgresStore<NotesUser>(pool: pool, tableName: table + "_users"),
            tokens: try await PostgresStore<NotesAccessToken>(pool: pool, tableName: table + "_tokens"),
            notes: notes,
            changes: changes
        )
    }
}
