import ArgumentParser
import Foundation
import TetherNotes
import TetherStore

extension NotesCommand {
    /// `tether notes watch --remote HOST:PORT`: one line per change a notes server pushes, until interrupted.
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each change a notes server pushes (added, edited, removed) until interrupted."
        )

        @OptionGroup var options: Options

        func validate() throws {
            if options.remote == nil { throw ValidationError("watch needs --remote HOST:PORT.") }
        }

        func run() async throws {
            Terminal.exitOnSignals()
            try await reportingErrors {
                guard case .remote(let store) = try await options.openBackend() else { return }
                let changes = try await store.changes()
                if options.verbose { Terminal.error("debug: subscribed") }
                for try await change in changes {
                    switch change {
                    // Notes are other people's text: printed with their control characters escaped.
                    case .added(let note):
                        Terminal.line("added \(note.id.uuidString) \(Terminal.printable(note.content))")
                    case .edited(let note):
                        Terminal.line("edited \(note.id.uuidString) \(Terminal.printable(note.content))")
                    case .removed(let id): Terminal.line("removed \(id.uuidString)")
                    }
                }
                throw NotesFailure(message: "the server closed the connection")
            }
        }
    }
}
