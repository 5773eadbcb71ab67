import ArgumentParser
import Foundation
import TetherConcurrency
import TetherNotes
import TetherPostgres
import TetherSockets
import TetherStore

/// `tether serve --notes`: the notes service on a local store or on PostgreSQL, until SIGINT/SIGTERM.
enum ServeNotes {
    static func run(
        host: String,
        port: Int,
        store: NotesCommand.StoreOption,
        dir: String?,
        postgres: String?,
        tls: TLSSettings?
    ) async throws {
        let dao: NoteDAO
        var changes = NotesChangeSource.local
        let listener: TCPListener
        do {
            if let postgres {
                let store = try await PostgresStore<Note>(url: postgres, tableName: "Note")
                dao = NoteDAO(store: store)
                changes = .feed { try await store.changes() }
            } else if let dir {
                dao = try NoteDAO.open(store.kind, directory: URL(fileURLWithPath: dir, isDirectory: true))
            } else {
                dao = try NoteDAO.open(store.kind, in: try AppDirectories(appName: "tether"))
            }
            // The seed app's first-launch step, so that `tether notes` on the same folder sees the same notes.
            if postgres == nil { try await dao.createEditableCopyOfDatabaseIfNeeded() }
            listener = try await TCPListener.bind(host: host, port: port, tls: tls)
        } catch {
            Terminal.error("error: \(error)")
            throw ExitCode.failure
        }
        let server = NotesServer(dao: dao, changes: changes)
        // Subscribed to the database's changes before the first line: a watcher that connects after it misses none.
        let started = LockedBox(false)
        do {
            try await server.serve(listener) {
                started.withLock { $0 = true }
                Terminal.line("listening on \(host):\(listener.localPort)\(tls != nil ? " (TLS)" : "")")
            }
        } catch  where !started.withLock({ $0 }) {
            Terminal.error("error: \(error)")
            throw ExitCode.failure
        }
    }
}
