import Foundation
import PostgresNIO
import Testing
import TetherPostgres
import TetherStore
import TetherTestSupport

// The code of the article "Getting started" (TetherPostgres.docc/GettingStarted.md). Each Swift block of the article
// appears here line for line (`everySwiftBlockOfTheArticleIsCodeOfThisFile` checks it); the tests below run them
// against the PostgreSQL server the tests start.

// MARK: - Opening a store

func openNotes(at url: String) async throws -> NoteDAO {
    // e.g. "postgres://notes@db.internal:5432/notes?sslmode=verify-full"
    // or   "postgres://notes@/notes?host=/run/postgresql" (a unix socket)
    let store = try await PostgresStore<Note>(url: url, tableName: "Note")  // creates or migrates the table
    return NoteDAO(store: store)  // the seed's DAO, unchanged
}

func openTwoTables(at url: String) async throws -> (PostgresStore<Note>, PostgresStore<Note>) {
    let pool = try PostgresPool(url: url)  // postgres-nio's PostgresClient, running
    let inbox = try await PostgresStore<Note>(pool: pool, tableName: "inbox")
    let archive = try await PostgresStore<Note>(pool: pool, tableName: "archive")
    return (inbox, archive)
}

// MARK: - Lost races

func rename(_ id: UUID, to content: String, in store: PostgresStore<Note>) async throws -> Bool {
    guard let (read, version) = try await store.fetchOneWithVersion(id: id) else { return false }
    var note = read
    note.content = content
    do {
        try await store.update(note, expectedVersion: version)  // one statement: check and write
        return true
    } catch StoreError.Code.conflict {
        return false  // another writer changed it since we read it: read again and decide
    }
}

// MARK: - Watch changes

func printChanges(of store: PostgresStore<Note>, upTo count: Int) async throws -> [String] {
    var lines: [String] = []
    for try await change in try await store.changes() {  // listening from here on
        switch change {
        case .inserted(let note): lines.append("added \(note.content)")
        case .updated(let note): lines.append("edited \(note.content)")
        case .deleted(let id): lines.append("removed \(id)")
        }
        if lines.count == count { break }  // ends the feed and closes its connection
    }
    return lines
}

// MARK: - Errors

func reachable(_ url: String) async -> Bool {
    do {
        _ = try await PostgresStore<Note>(url: url)
        return true
    } catch StoreError.Code.invalidArgument {
        return false  // not a postgres:// URL
    } catch {
        return false  // StoreError.Code.io: refused, authentication, no such database
    }
}

// MARK: - Objects

func pinnedNotes(databaseURL: String) throws -> [String] {
    let model = ObjectModel(entities: [
        EntityDescription(
            name: "Note",
            attributes: [
                AttributeDescription(name: "content", type: .string),
                AttributeDescription(name: "pinned", type: .boolean, defaultValue: .boolean(false)),
            ]
        )
    ])
    let configuration = try PostgresConfiguration(url: databaseURL)
    let container = PersistentContainer(name: "Notes", model: model, postgres: configuration)
    try container.loadPersistentStores()  // creates the tables, or migrates the stored model
    let context = container.viewContext
    try context.insert(entityName: "Note", values: ["content": .string("Call Ann"), "pinned": .boolean(true)])
    try context.save()  // one transaction; .conflict if another process saved these objects first
    let request = FetchRequest(entityName: "Note", predicate: .equal("pinned", .boolean(true)))
    return try context.fetch(request).compactMap { object in
        if case .string(let content) = object["content"] { content } else { nil }
    }
}

@Suite(needsPostgreSQL, .timeLimit(.minutes(1)))
struct GettingStartedExamples {
    @Test func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherPostgres/TetherPostgres.docc/GettingStarted.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 6)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherPostgresTests/GettingStartedExamples.swift"]
        )
        #expect(missing.isEmpty, "not in GettingStartedExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test func theNotesDAOAndTwoTablesOnOnePool() async throws {
        let url = try await freshDatabase()
        let dao = try await openNotes(at: url)
        try await dao.createEditableCopyOfDatabaseIfNeeded()
        #expect(try await dao.findAll().count == 2)
        let (inbox, archive) = try await openTwoTables(at: url)
        try await inbox.insert(Note(content: "in"))
        #expect(try await archive.count() == 0)
        #expect(inbox.pool === archive.pool)
    }

    @Test func aRenameThatLostARaceReturnsFalse() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        let note = Note(content: "draft")
        try await store.insert(note)
        #expect(try await rename(note.id, to: "final", in: store))
        #expect(try await store.fetchOne(id: note.id)?.content == "final")
        #expect(try await !rename(UUID(), to: "x", in: store))
    }

    @Test func reachableTellsABadURLAndAMissingDatabase() async throws {
        #expect(await !reachable("http://nowhere"))
        #expect(await !reachable(try await PostgresTestServer.shared.url(database: "absent")))
        #expect(await reachable(try await freshDatabase()))
    }

    @Test func printChangesSeesAnotherWritersChanges() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        let writer = try await PostgresStore<Note>(url: url)
        // One write to each of three notes: the feed reports each row as the table holds it when it reads it.
        var edited = Note(content: "before")
        let removed = Note(content: "removed")
        try await writer.insert(contentsOf: [edited, removed])
        let (listening, started) = AsyncStream.makeStream(of: Void.self)
        let watching = Task {
            // `changes()` returns once listening; the first change is made after the feed's connection listens.
            let lines = try await printChanges(of: store, upTo: 3)
            return lines
        }
        // The feed is listening once the server shows a LISTEN backend for this database.
        Task {
            while try await !isListening(store) { try await Task.sleep(for: .milliseconds(10)) }
            started.finish()
        }
        for await _ in listening {}
        try await writer.insert(Note(content: "one"))
        edited.content = "two"
        try await writer.update(edited)
        try await writer.delete(id: removed.id)
        #expect(try await watching.value == ["added one", "edited two", "removed \(removed.id)"])
        // The feed's connection is closed once the loop breaks.
        while try await isListening(store) { try await Task.sleep(for: .milliseconds(10)) }
    }

    private func isListening(_ store: PostgresStore<Note>) async throws -> Bool {
        let rows = try await store.pool.client.query(
            """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE 'LISTEN%' AND state = 'idle'
            """
        )
        for try await count in rows.decode(Int64.self) { return count > 0 }
        return false
    }

    @Test func pinnedNotesOnAContainer() async throws {
        let url = try await freshDatabase()
        #expect(try pinnedNotes(databaseURL: url) == ["Call Ann"])
    }
}
