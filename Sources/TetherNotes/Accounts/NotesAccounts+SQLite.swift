public import Foundation
import GRDB
import TetherStore

extension NotesAccounts {
    /// The file of ``sqlite(directory:passwordIterations:)`` in its folder.
    public static let sqliteFileName = "NotesAccounts.sqlite3"

    /// Accounts in one SQLite file, `NotesAccounts.sqlite3` in `directory` (folder mode 0700, file mode 0600):
    /// tables `users` and `tokens`, and one table of notes per user (``NotesUser/notesTable``), whose changes are
    /// pushed by the server that makes them (``NotesChangeSource/local``).
    /// - Parameters:
    ///   - directory: the folder (created if needed).
    ///   - passwordIterations: PBKDF2 iterations for new passwords.
    /// - Throws: `StoreError` when the folder or the database cannot be opened.
    public static func sqlite(
        directory: URL,
        passwordIterations: Int = PasswordVerifier.defaultIterations
    ) throws -> NotesAccounts {
        let url = directory.appendingPathComponent(sqliteFileName)
        let pool: DatabasePool
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            if !FileManager.default.fileExists(atPath: url.path) {
                _ = FileManager.default.createFile(
                    atPath: url.path,
                    contents: nil,
                    attributes: [.posixPermissions: 0o600]
                )
            }
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            pool = try DatabasePool(path: url.path, configuration: configuration)
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        } catch {
            throw StoreError(code: .io, message: "cannot open the accounts database", url: url, underlying: error)
        }
        return NotesAccounts(
            users: try SQLiteStore<NotesUser>(database: pool, tableName: "users"),
            tokens: try SQLiteStore<NotesAccessToken>(database: pool, tableName: "tokens"),
            passwordIterations: passwordIterations,
            notes: { user in NotesSpace(store: try SQLiteStore<Note>(database: pool, tableName: user.notesTable)) },
            dropNotes: { user in
                try await pool.write { db in
                    try db.execute(sql: "DROP TABLE IF EXISTS \(user.notesTable.quotedDatabaseIdentifier)")
                }
            }
        )
    }
}
