import Foundation
import Testing
import TetherNotes
import TetherPostgres
import TetherSockets
import TetherStore
import TetherTestSupport

// The code of the article "Deploying the notes service" (TetherNotes.docc/Deploying.md), line for line
// (`everySwiftBlockOfTheArticleIsCodeOfThisFile` checks it). The behaviour they show is tested in
// NotesServiceTests, NotesSharedDatabaseTests and NotesPostgresCommandTests.

func serveNotes(from folder: URL, port: Int, tls: TLSSettings) async throws {
    let accounts = try NotesAccounts.sqlite(directory: folder)
    let listener = try await TCPListener.bind(host: "0.0.0.0", port: port, tls: tls)
    try await NotesServer(accounts: accounts).serve(listener)
}

func postgresAccounts(
    url: String,
    passwordIterations: Int = PasswordVerifier.defaultIterations
) async throws -> NotesAccounts {
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

func serveSharedNotes(databaseURL: String, port: Int, tls: TLSSettings) async throws {
    let server = NotesServer(accounts: try await postgresAccounts(url: databaseURL))
    let listener = try await TCPListener.bind(host: "0.0.0.0", port: port, tls: tls)
    try await server.serve(listener) { print("listening on 0.0.0.0:\(listener.localPort) (TLS)") }
}

func connectAsAlice(token: String, tls: TLSSettings) async throws -> [Note] {
    let notes = try await RemoteNoteStore.connect(
        host: "notes.internal",
        port: 7_070,
        tls: tls,
        credentials: .token(user: "alice", token)
    )
    let all = try await notes.list()
    await notes.close()
    return all
}

@Suite struct DeployingExamples {
    @Test func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherNotes/TetherNotes.docc/Deploying.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 4)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherNotesTests/DeployingExamples.swift"]
        )
        #expect(missing.isEmpty, "not in DeployingExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }
}
