// notes: the seed's notes app (`NoteDAO` over `Note`s) on each of TetherStore's record stores.
//
//   notes --store plist|archive|sqlite|memory [--dir DIR] COMMAND...
//
// COMMANDs run in order in one process: `add TEXT` adds a note and prints its id, `list` prints every note as
// "DATE  TEXT", oldest first. For example `notes --store sqlite --dir /tmp/notes add "buy milk" list`.
// The file stores keep their notes in DIR across runs (NotesList.plist, NotesList.archive or NotesList.sqlite3);
// the memory store keeps them for the run only. An empty store first receives the seed app's two welcome notes,
// as the seed did on its first launch.
import ArgumentParser
import Foundation
import TetherStore

@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "Add and list notes in a plist, archive, SQLite or memory store."
    )

    enum Store: String, ExpressibleByArgument, CaseIterable {
        case plist, archive, sqlite, memory
    }

    enum Command {
        case add(String)
        case list
    }

    @Option(help: "Where the notes live.")
    var store: Store

    @Option(help: "The folder of a file store (created if needed).")
    var dir: String?

    @Argument(help: ArgumentHelp("add TEXT or list, as many as wanted, run in order.", valueName: "command"))
    var words: [String]

    func validate() throws {
        guard store == .memory || dir != nil else { throw ValidationError("--store \(store.rawValue) needs --dir.") }
        _ = try commands()
    }

    /// The words as commands: `add TEXT` or `list`.
    func commands() throws -> [Command] {
        var commands: [Command] = []
        var words = self.words[...]
        while let word = words.popFirst() {
            switch word {
            case "add":
                guard let text = words.popFirst() else { throw ValidationError("add needs a text.") }
                commands.append(.add(text))
            case "list":
                commands.append(.list)
            default:
                throw ValidationError("unknown command '\(word)': expected add TEXT or list.")
            }
        }
        guard !commands.isEmpty else { throw ValidationError("give a command: add TEXT or list.") }
        return commands
    }

    func run() async throws {
        do {
            let dao = try openDAO()
            try await dao.createEditableCopyOfDatabaseIfNeeded()  // the seed's first launch: two welcome notes
            for command in try commands() {
                switch command {
                case .add(let text):
                    let note = Note(content: text)
                    try await dao.create(note)
                    printLine("added \(note.id)")
                case .list:
                    for note in try await dao.findAll() {
                        printLine("\(note.date.formatted(.iso8601))  \(note.content)")
                    }
                }
            }
        } catch let error as StoreError {
            printError("error: \(error)")
            throw ExitCode.failure
        }
    }

    /// The DAO over the chosen store.
    func openDAO() throws -> NoteDAO {
        let kind: NoteDAO.StoreKind
        switch store {
        case .memory:
            return NoteDAO(store: MemoryStore<Note>())
        case .plist: kind = .plist
        case .archive: kind = .archive
        case .sqlite: kind = .sqlite
        }
        return try NoteDAO.open(kind, directory: URL(fileURLWithPath: dir!, isDirectory: true))
    }
}

/// Writes a line to standard output at once (`print` keeps it in a buffer while stdout is a pipe).
func printLine(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
