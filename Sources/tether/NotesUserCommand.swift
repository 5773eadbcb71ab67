import ArgumentParser
import Foundation
import TetherNotes
import TetherPostgres
import TetherStore

extension NotesCommand {
    /// `tether notes user add|list|rm|revoke-tokens|import`: the accounts of a notes server.
    struct User: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage the users of a notes server (tether serve --notes) and their passwords and tokens.",
            subcommands: [Add.self, List.self, Remove.self, RevokeTokens.self, Import.self]
        )

        /// Where the accounts are.
        struct Place: ParsableArguments {
            @Option(help: "The folder of the server's store (default: the tether app's Documents folder).")
            var dir: String?

            @Option(help: "The server's PostgreSQL database instead (postgres://USER[:PASSWORD]@HOST[:PORT]/DB).")
            var postgres: String?

            func validate() throws {
                if dir != nil && postgres != nil { throw ValidationError("--dir and --postgres exclude each other.") }
            }

            func open(passwordIterations: Int = PasswordVerifier.defaultIterations) async throws -> NotesAccounts {
                try await NotesAccountsBackend.open(
                    dir: dir,
                    postgres: postgres,
                    passwordIterations: passwordIterations
                )
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add a user, with the password read from standard input (not echoed on a terminal).",
                discussion: """
                    With --token, print a new access token instead (once: only its hash is kept); for a user that \
                    exists, the token is added to their credentials.
                    """
            )

            @OptionGroup var place: Place

            @Argument(help: "The user's name (1-64 of A-Z a-z 0-9 . _ -).")
            var name: String

            @Flag(help: "Print a new access token instead of reading a password.")
            var token = false

            @Option(help: "With --token: the token expires after this many days.")
            var expiresInDays: Int?

            @Option(help: "PBKDF2 iterations of the password (default 600000; fewer only for tests).")
            var pbkdf2Iterations = PasswordVerifier.defaultIterations

            func validate() throws {
                if expiresInDays != nil && !token { throw ValidationError("--expires-in-days goes with --token.") }
                if let days = expiresInDays, days < 1 { throw ValidationError("--expires-in-days must be 1 or more.") }
                if pbkdf2Iterations < 1 { throw ValidationError("--pbkdf2-iterations must be 1 or more.") }
            }

            func run() async throws {
                try await reportingErrors {
                    let accounts = try await place.open(passwordIterations: pbkdf2Iterations)
                    if token {
                        if try await accounts.user(named: name) == nil {
                            try await accounts.addUser(name, password: nil)
                        }
                        let expiry = expiresInDays.map { Date().addingTimeInterval(Double($0) * 86_400) }
                        Terminal.line(try await accounts.issueToken(for: name, expiresAt: expiry))
                        return
                    }
                    guard let password = PasswordPrompt.read("password for \(name): "), !password.isEmpty else {
                        throw NotesFailure(message: "no password on standard input")
                    }
                    try await accounts.addUser(name, password: password)
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Print each user's name, oldest first.")

            @OptionGroup var place: Place

            func run() async throws {
                try await reportingErrors {
                    for user in try await place.open().allUsers() {
                        let kind = user.password == nil ? "token" : "password"
                        Terminal.line("\(user.name)  \(isoDate(user.created))  \(kind)")
                    }
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "rm",
                abstract: "Remove a user with their tokens and every one of their notes."
            )

            @OptionGroup var place: Place

            @Argument(help: "The user's name.")
            var name: String

            func run() async throws {
                try await reportingErrors {
                    guard try await place.open().removeUser(name) else {
                        throw NotesFailure(message: "no user \(name)")
                    }
                }
            }
        }

        struct RevokeTokens: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "revoke-tokens",
                abstract: "Revoke every access token of a user; print how many."
            )

            @OptionGroup var place: Place

            @Argument(help: "The user's name.")
            var name: String

            func run() async throws {
                try await reportingErrors {
                    let accounts = try await place.open()
                    guard try await accounts.user(named: name) != nil else {
                        throw NotesFailure(message: "no user \(name)")
                    }
                    Terminal.line("\(try await accounts.revokeTokens(of: name))")
                }
            }
        }

        struct Import: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Copy the notes of a single-user store (tether notes without accounts) to a user.",
                discussion: """
                    With --dir, the store is NotesList.<kind> in that folder; with --postgres, the table "Note" of \
                    that database. Notes keep their ids and dates; running it twice copies nothing twice.
                    """
            )

            @OptionGroup var place: Place

            @Option(help: "The single-user store's kind: plist, archive or sqlite.")
            var store: NotesCommand.StoreOption = .sqlite

            @Argument(help: "The user who receives the notes.")
            var name: String

            func run() async throws {
                try await reportingErrors {
                    let accounts = try await place.open()
                    let dao: NoteDAO
                    if let postgres = place.postgres {
                        dao = NoteDAO(store: try await PostgresStore<Note>(url: postgres, tableName: "Note"))
                    } else {
                        dao = try NoteDAO.open(store.kind, directory: try NotesAccountsBackend.folder(place.dir))
                    }
                    Terminal.line("\(try await accounts.importNotes(from: dao, to: name))")
                }
            }
        }
    }
}
