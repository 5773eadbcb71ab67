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
        var note = Note(content: "first")
        try await writer.insert(note)
        note.content = "edited"
        try await writer.update(note)
        let upserted = Note(content: "upserted")
        try await writer.upsert(upserted)
        try await writer.delete(id: note.id)
        #expect(try await changes.next() == .inserted(Note(id: note.id, date: note.date, content: "first")))
        #expect(try await changes.next() == .updated(note))
        #expect(try await changes.next() == .inserted(upserted))
        #expect(try await changes.next() == .deleted(note.id))
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

    @Test func aRecordTooLargeToCarryIsReadFromTheTable() async throws {
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

    @Test func aNotificationTheTriggerDidNotSendEndsTheFeedWithCorruptData() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        var changes = try await store.changes().makeAsyncIterator()
        let channel = PostgresChangeNotification.channel(for: "Note")
        try await store.pool.client.query("SELECT pg_notify(\(channel), 'not json')")
        await expectStoreError(.corruptData) { _ = try await changes.next() }
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
