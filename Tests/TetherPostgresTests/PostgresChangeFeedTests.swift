import Foundation
import PostgresNIO
import Testing
import TetherStore
import TetherTestSupport

@testable import TetherPostgres

/// `PostgresStore.changes()`: every committed write by any client, in commit order, nothing rolled back, nothing from
/// other tables; large records read back; a bad notification and a lost connection end the feed with typed errors.
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct PostgresChangeFeedTests {
    @Test func writesOfAnotherClientArriveInCommitOrder() async throws {
        let url = try await freshDatabase()
        let watched = try await PostgresStore<Note>(url: url)
        let writer = try await PostgresStore<Note>(url: url)
        var changes = try await watched.changes().makeAsyncIterator()
        // Each write waits for its change: the feed reports a row as the table holds it when it reads it.
        var note = Note(content: "first")
        try await writer.insert(note)
        #expect(try await changes.next() == .inserted(Note(id: note.id, date: note.date, content: "first")))
        note.content = "edited"
        try await writer.update(note)
        #expect(try await changes.next() == .updated(note))
        let upserted = Note(content: "upserted")
        try await writer.upsert(upserted)
        #expect(try await changes.next() == .inserted(upserted))
        try await writer.delete(id: note.id)
        #expect(try await changes.next() == .deleted(note.id))
    }

    @Test func writesInQuickSuccessionAreReportedInOrderEndingWithTheTablesState() async throws {
        let url = try await freshDatabase()
        let watched = try await PostgresStore<Note>(url: url)
        let writer = try await PostgresStore<Note>(url: url)
        var changes = try await watched.changes().makeAsyncIterator()
        var note = Note(content: "first")
        try await writer.insert(note)
        note.content = "edited"
        try await writer.update(note)
        let last = Note(content: "last")
        try await writer.insert(last)
        // The insert is reported with the content the table holds when the feed reads it: "first" or "edited".
        guard case .inserted(let inserted) = try await changes.next() else { throw StoreError(code: .io, message: "") }
        #expect(inserted.id == note.id && ["first", "edited"].contains(inserted.content))
        #expect(try await changes.next() == .updated(note))
        #expect(try await changes.next() == .inserted(last))
    }

    @Test func aRolledBackBatchIsNotReportedAndACommittedOneIsInOrder() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        var changes = try await store.changes().makeAsyncIterator()
        let existing = Note(content: "existing")
        try await store.insert(existing)
        #expect(try await changes.next() == .inserted(existing))
        // The second record's id exists: the whole batch rolls back, and so do its first row's notification.
        await expectStoreError(.duplicateID) {
            try await store.insert(contentsOf: [Note(content: "rolled back"), existing])
        }
        let batch = (0..<3).map { Note(content: "batch \($0)") }
        try await store.insert(contentsOf: batch)
        for note in batch { #expect(try await changes.next() == .inserted(note)) }
    }

    @Test func aLargeRecordIsReadFromTheTableAndAWriteToARowDeletedSinceIsSkipped() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        var changes = try await store.changes().makeAsyncIterator()
        let large = Note(content: String(repeating: "large ", count: 2_000))
        try await store.insert(large)
        #expect(try await changes.next() == .inserted(large))
        // Updated and deleted in one transaction: when the feed reads the update, the record is gone; the update is
        // skipped and the deletion reported.
        let gone = Note(content: "gone")
        let (key, blob) = try RecordRowCoding<Note>.encode(
            Note(id: large.id, content: String(repeating: "x", count: 5_000))
        )
        let record = ByteBuffer(bytes: blob)
        try await store.pool.client.withConnection { connection in
            try await PostgresPool.transaction(on: connection) { connection in
                try await connection.query(
                    "UPDATE \"Note\" SET record = \(record) WHERE id = \(key)",
                    logger: PostgresPool.logger
                )
                try await connection.query("DELETE FROM \"Note\" WHERE id = \(key)", logger: PostgresPool.logger)
            }
        }
        try await store.insert(gone)
        #expect(try await changes.next() == .deleted(large.id))
        #expect(try await changes.next() == .inserted(gone))
    }

    @Test func anotherTablesWritesAreNotReported() async throws {
        let url = try await freshDatabase()
        let watched = try await PostgresStore<Note>(url: url, tableName: "watched")
        let other = try await PostgresStore<Note>(url: url, tableName: "other")
        var changes = try await watched.changes().makeAsyncIterator()
        try await other.insert(Note(content: "elsewhere"))
        let here = Note(content: "here")
        try await watched.insert(here)
        #expect(try await changes.next() == .inserted(here))
    }

    @Test func aMalformedNotificationIsSkippedWithAWarningAndTheFeedGoesOn() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        let logs = InMemoryLogs()
        var changes = try await store.changes(logger: logs.logger).makeAsyncIterator()
        let channel = PostgresChangeNotification.channel(schema: "public", table: "Note")
        for garbage in ["garbage", "{\"s\":\"public\",\"t\":\"Note\",\"o\":\"x\",\"id\":\"1\",\"v\":1}"] {
            try await store.pool.client.query("SELECT pg_notify(\(channel), \(garbage))")
        }
        let after = Note(content: "after the garbage")
        try await store.insert(after)
        #expect(try await changes.next() == .inserted(after))
        #expect(logs.messages.filter { $0.contains("skipped a change notification") }.count == 2)
    }

    @Test func aForgedNotificationIsNotReportedAsANote() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        var changes = try await store.changes().makeAsyncIterator()
        let channel = PostgresChangeNotification.channel(schema: "public", table: "Note")
        let kept = Note(content: "kept")
        try await store.insert(kept)
        #expect(try await changes.next() == .inserted(kept))
        let version = try #require(try await store.fetchOneWithVersion(id: kept.id)).version
        let forged = Note(content: "FORGED")
        let forgedKey = String(decoding: try JSONEncoder().encode(forged.id), as: UTF8.self)
        let keptKey = String(decoding: try JSONEncoder().encode(kept.id), as: UTF8.self)
        func payload(_ op: String, _ key: String, _ version: Int64) throws -> String {
            let body: [String: String] = ["s": "public", "t": "Note", "o": op, "id": key]
            var json = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
            json.removeLast()
            return json + ",\"v\":\(version),\"r\":\"\(Data("{\"content\":\"FORGED\"}".utf8).base64EncodedString())\"}"
        }
        // A note the table does not hold, an insert of a version newer than the table's, a deletion of a row that
        // exists: none is reported.
        for forgery in [
            try payload("i", forgedKey, 1), try payload("u", keptKey, version + 100),
            try payload("d", keptKey, version),
        ] {
            try await store.pool.client.query("SELECT pg_notify(\(channel), \(forgery))")
        }
        let real = Note(content: "real")
        try await store.insert(real)
        #expect(try await changes.next() == .inserted(real))
        #expect(try await store.fetchAll() == [kept, real])
    }

    @Test func aTableOfTheSameNameInAnotherSchemaHasAFeedOfItsOwn() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        #expect(store.schemaName == "public")
        var changes = try await store.changes().makeAsyncIterator()
        // tenant_b."Note", made by a record store whose connections' search path starts with tenant_b.
        try await store.pool.client.query("CREATE SCHEMA tenant_b")
        try await store.pool.client.withConnection { connection in
            try await connection.query("SET search_path TO tenant_b", logger: PostgresPool.logger)
            #expect(try await PostgresSchema.prepare(table: "Note", on: connection) == "tenant_b")
            try await connection.query("RESET search_path", logger: PostgresPool.logger)
        }
        let (key, blob) = try RecordRowCoding<Note>.encode(Note(content: "tenant b's"))
        let record = ByteBuffer(bytes: blob)
        try await store.pool.client.query("INSERT INTO tenant_b.\"Note\" (id, record) VALUES (\(key), \(record))")
        let mine = Note(content: "public's")
        try await store.insert(mine)
        #expect(try await changes.next() == .inserted(mine))
    }

    @Test func aLostConnectionEndsTheFeedWithIO() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        var changes = try await store.changes().makeAsyncIterator()
        // The server ends every other backend that is listening (the feed's connection).
        try await store.pool.client.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE pid <> pg_backend_pid() AND datname = current_database() AND query LIKE 'LISTEN%'
            """
        )
        await expectStoreError(.io) { _ = try await changes.next() }
    }

    @Test func watchingADatabaseThatRefusesConnectionsIsAnIOError() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
        // A database cannot refuse connections to itself: say it from the server's default database.
        let admin = try PostgresPool(url: try await PostgresTestServer.shared.url())
        try await admin.client.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS false"))
        await expectStoreError(.io) { _ = try await store.changes() }
        try await admin.client.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS true"))
        await admin.close()
    }
}
