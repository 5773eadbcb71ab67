import ArgumentParser
import Foundation
import TetherConcurrency
import TetherNotes
import TetherPostgres
import TetherSockets
import TetherStore

/// `tether serve --notes`: the notes service, with accounts (or anonymous on loopback when asked), on a local store
/// or on PostgreSQL, until SIGINT/SIGTERM.
struct ServeNotes {
    var host: String
    var port: Int
    var store: NotesCommand.StoreOption
    var dir: String?
    var postgres: String?
    var anonymous: Bool
    var insecureNoTLS: Bool

    /// Whether `host` names loopback only.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
    }

    func run(tls: TLSSettings?) async throws {
        let loopback = Self.isLoopback(host)
        if anonymous && !loopback {
            Terminal.error("error: --anonymous serves loopback only (--host 127.0.0.1 or ::1), not \(host)")
            throw ExitCode(64)
        }
        if !loopback && tls == nil {
            if !insecureNoTLS {
                Terminal.error(
                    "error: listening on \(host) without TLS would send passwords and notes in the clear; "
                        + "add --tls --cert FILE --key FILE, or allow it with --insecure-no-tls"
                )
                throw ExitCode(64)
            }
            Terminal.error("warning: --insecure-no-tls: passwords and notes travel in the clear on \(host)")
        }
        let server: NotesServer
        let listener: TCPListener
        do {
            server = try await makeServer()
            listener = try await TCPListener.bind(host: host, port: port, tls: tls)
        } catch {
            Terminal.error("error: \(error)")
            throw ExitCode.failure
        }
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

    private func makeServer() async throws -> NotesServer {
        guard anonymous else {
            let accounts = try await NotesAccountsBackend.open(dir: dir, postgres: postgres)
            if try await accounts.allUsers().isEmpty {
                Terminal.error("warning: no users yet: add one with tether notes user add NAME")
            }
            return NotesServer(accounts: accounts)
        }
        if let postgres {
            let store = try await PostgresStore<Note>(url: postgres, tableName: "Note")
            return NotesServer(dao: NoteDAO(store: store), changes: .feed { try await store.changes() })
        }
        let folder = try NotesAccountsBackend.folder(dir)
        let dao = try NoteDAO.open(store.kind, directory: folder)
        // The seed app's first-launch step, so that `tether notes` on the same folder sees the same notes.
        try await dao.createEditableCopyOfDatabaseIfNeeded()
        return NotesServer(dao: dao)
    }
}
