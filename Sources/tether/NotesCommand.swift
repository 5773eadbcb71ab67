import ArgumentParser
import Foundation
import TetherNotes
import TetherStore

/// `tether notes add|list|edit|rm`: the seed's notes app on the command line, over `NoteDAO`.
struct NotesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "Add, list, edit and remove notes in a plist, archive or SQLite store, or on a notes server.",
        subcommands: [Add.self, List.self, Edit.self, Remove.self, Watch.self, User.self]
    )

    /// The store a notes subcommand works on.
    enum StoreOption: String, ExpressibleByArgument, CaseIterable {
        case plist, archive, sqlite

        var kind: NoteDAO.StoreKind {
            switch self {
            case .plist: .plist
            case .archive: .archive
            case .sqlite: .sqlite
            }
        }
    }

    /// Options every notes subcommand takes.
    struct Options: ParsableArguments {
        @Option(help: "The store: plist, archive or sqlite.")
        var store: StoreOption = .sqlite

        @Option(help: "The folder of the store (default: the tether app's Documents folder).")
        var dir: String?

        @Flag(help: "Debug output on stderr.")
        var verbose = false

        @Option(help: "A notes server (HOST:PORT, `tether serve --notes`) instead of a local store.")
        var remote: String?

        @Option(
            help: ArgumentHelp(
                "With --remote: log in as this user.",
                discussion: """
                    The secret comes from --credentials FILE, or else $TETHER_NOTES_TOKEN, or else \
                    $TETHER_NOTES_PASSWORD. A refused login exits 77.
                    """
            )
        )
        var user: String?

        @Option(
            help: ArgumentHelp(
                "With --user: a file whose first line is 'password: SECRET' or 'token: SECRET'.",
                discussion: "The file must not be readable or writable by group or others (chmod 600).",
                valueName: "file"
            )
        )
        var credentials: String?

        @OptionGroup var security: TLSOptions

        func validate() throws {
            if remote != nil && dir != nil { throw ValidationError("--remote and --dir exclude each other.") }
            if user != nil && remote == nil { throw ValidationError("--user needs --remote.") }
            if credentials != nil && user == nil { throw ValidationError("--credentials needs --user.") }
            if remote == nil && security.tls { throw ValidationError("--tls needs --remote.") }
            try security.check(server: false, udp: false)
            if let remote { _ = try Self.hostAndPort(remote) }
        }

        /// `HOST:PORT` (an IPv6 host in brackets) split.
        static func hostAndPort(_ text: String) throws -> (String, Int) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                (1...65_535).contains(port), colon != text.startIndex
            else { throw ValidationError("--remote wants HOST:PORT, got '\(text)'") }
            var host = String(text[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            return (host, port)
        }

        /// The store or the server the subcommand works on.
        func openBackend() async throws -> NotesBackend {
            guard let remote else { return .local(try await openDAO()) }
            let (host, port) = try Self.hostAndPort(remote)
            if verbose { Terminal.error("debug: notes server \(host):\(port)\(security.tls ? " (TLS)" : "")") }
            let login = try user.map { try NotesLogin.credentials(user: $0, file: credentials) }
            do {
                return .remote(
                    try await RemoteNoteStore.connect(
                        host: host,
                        port: port,
                        tls: security.clientSettings(),
                        credentials: login
                    )
                )
            } catch let error as NotesError where error.code == .authenticationFailed {
                throw NotesLogin.Refused()
            } catch let error as NotesError {
                throw NotesFailure(message: error.message)
            }
        }

        /// Opens the DAO and runs the seed's first-launch step, as the seed app did at start.
        func openDAO() async throws -> NoteDAO {
            let dao: NoteDAO
            if let dir {
                dao = try NoteDAO.open(store.kind, directory: URL(fileURLWithPath: dir, isDirectory: true))
            } else {
                dao = try NoteDAO.open(store.kind, in: try AppDirectories(appName: "tether"))
            }
            if verbose {
                Terminal.error("debug: notes store \(store.rawValue) in \(dir ?? "the tether Documents folder")")
            }
            try await dao.createEditableCopyOfDatabaseIfNeeded()
            return dao
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a note and print its id.")

        @OptionGroup var options: Options

        @Argument(help: "The note's text.")
        var text: String

        func run() async throws {
            try await reportingErrors {
                let notes = try await options.openBackend()
                let note = try await notes.add(text)
                await notes.close()
                Terminal.line(note.id.uuidString)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the notes, oldest first.")

        @OptionGroup var options: Options

        @Flag(help: "Print a JSON array.")
        var json = false

        func run() async throws {
            try await reportingErrors {
                let backend = try await options.openBackend()
                let notes = try await backend.list()
                await backend.close()
                if json {
                    struct Entry: Encodable {
                        var id: String
                        var date: String
                        var content: String
                    }
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                    let entries = notes.map {
                        Entry(id: $0.id.uuidString, date: isoDate($0.date), content: $0.content)
                    }
                    Terminal.line(String(decoding: try encoder.encode(entries), as: UTF8.self))
                } else {
                    for note in notes {
                        // Other people's text: its control characters escaped (the JSON form escapes them too).
                        Terminal.line(
                            "\(note.id.uuidString)  \(isoDate(note.date))  \(Terminal.printable(note.content))"
                        )
                    }
                }
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace the text of a note.")

        @OptionGroup var options: Options

        @Argument(help: "The note's id.")
        var id: String

        @Argument(help: "The new text.")
        var text: String

        func validate() throws {
            guard UUID(uuidString: id) != nil else { throw ValidationError("'\(id)' is not a note id (a UUID)") }
        }

        func run() async throws {
            try await reportingErrors {
                let notes = try await options.openBackend()
                let found = try await notes.edit(UUID(uuidString: id)!, text: text)
                await notes.close()
                guard found else { throw NotesFailure(message: "no note \(id)") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a note.")

        @OptionGroup var options: Options

        @Argument(help: "The note's id.")
        var id: String

        func validate() throws {
            guard UUID(uuidString: id) != nil else { throw ValidationError("'\(id)' is not a note id (a UUID)") }
        }

        func run() async throws {
            try await reportingErrors {
                let notes = try await options.openBackend()
                let found = try await notes.remove(UUID(uuidString: id)!)
                await notes.close()
                guard found else { throw NotesFailure(message: "no note \(id)") }
            }
        }
    }
}

/// A runtime failure of a notes subcommand, reported as `error: <message>`.
struct NotesFailure: Error {
    var message: String
}

/// Runs `body`; a failure prints `error: …` on stderr and exits with status 1.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch is NotesLogin.Refused {
        // Nothing about why: a wrong password, an unknown user and a revoked token look alike.
        Terminal.error("error: authentication failed")
        throw ExitCode(77)
    } catch let failure as NotesFailure {
        Terminal.error("error: \(Terminal.printable(failure.message))")
        throw ExitCode.failure
    } catch let error as StoreError {
        Terminal.error("error: \(Terminal.printable("\(error)"))")
        throw ExitCode.failure
    } catch let error as NotesError {
        // A server's words: escaped like its notes.
        Terminal.error("error: \(Terminal.printable("\(error)"))")
        throw ExitCode.failure
    }
}

func isoDate(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: date)
}

/// The demo's notes step: CRUD on each store kind in a temporary `AppDirectories`; returns a one-line summary.
func runNotesDemoStep() async throws -> String {
    let root = FileManager.default.temporaryDirectory
        .appendingPathComponent("tether-notes-demo-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let directories = try AppDirectories(
        appName: "tether",
        environment: ["TMPDIR": root.appendingPathComponent("tmp").path],
        homeDirectory: root
    )
    var counts: [String] = []
    for kind in NoteDAO.StoreKind.allCases {
        let dao = try NoteDAO.open(kind, in: directories)
        try await dao.createEditableCopyOfDatabaseIfNeeded()
        var note = Note(content: "demo note")
        try await dao.create(note)
        note.content = "demo note, edited"
        try await dao.modify(note)
        guard try await dao.findById(note)?.content == note.content else {
            throw NotesFailure(message: "\(kind.rawValue): the edited note did not read back")
        }
        guard try await dao.remove(note) else {
            throw NotesFailure(message: "\(kind.rawValue): the note could not be removed")
        }
        let remaining = try await dao.findAll()
        guard remaining.count == 2, remaining.first?.content == "Welcome to MyNotes." else {
            throw NotesFailure(message: "\(kind.rawValue): expected the 2 seed notes, found \(remaining.count)")
        }
        counts.append(kind.rawValue)
    }
    return "notes CRUD on \(counts.joined(separator: ", ")) (create, modify, findById, remove; seed notes kept)"
}
