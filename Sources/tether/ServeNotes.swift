import ArgumentParser
import Foundation
import TetherNotes
import TetherSockets
import TetherStore

/// `tether serve --notes`: the notes service on a local store, until SIGINT/SIGTERM.
enum ServeNotes {
    static func run(
        host: String,
        port: Int,
        store: NotesCommand.StoreOption,
        dir: String?,
        tls: TLSSettings?
    ) async throws {
        let dao: NoteDAO
        let listener: TCPListener
        do {
            if let dir {
                dao = try NoteDAO.open(store.kind, directory: URL(fileURLWithPath: dir, isDirectory: true))
            } else {
                dao = try NoteDAO.open(store.kind, in: try AppDirectories(appName: "tether"))
            }
            // The seed app's first-launch step, so that `tether notes` on the same folder sees the same notes.
            try await dao.createEditableCopyOfDatabaseIfNeeded()
            listener = try await TCPListener.bind(host: host, port: port, tls: tls)
        } catch {
            Terminal.error("error: \(error)")
            throw ExitCode.failure
        }
        Terminal.line("listening on \(host):\(listener.localPort)\(tls != nil ? " (TLS)" : "")")
        try await NotesServer(dao: dao).serve(listener)
    }
}
