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

func serveNotes(from folder: URL, port: Int) async throws {
    let listener = try await TCPListener.bind(host: "0.0.0.0", port: port)
    try await NotesServer(dao: try NoteDAO.open(.sqlite, directory: folder)).serve(listener)
}

func serveSharedNotes(databaseURL: String, port: Int) async throws {
    let store = try await PostgresStore<Note>(url: databaseURL, tableName: "Note")
    let server = NotesServer(dao: NoteDAO(store: store), changes: .feed { try await store.changes() })
    let listener = try await TCPListener.bind(host: "0.0.0.0", port: port)
    try await server.serve(listener) { print("listening on 0.0.0.0:\(listener.localPort)") }
}

@Suite struct DeployingExamples {
    @Test func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherNotes/TetherNotes.docc/Deploying.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 2)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherNotesTests/DeployingExamples.swift"]
        )
        #expect(missing.isEmpty, "not in DeployingExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }
}
