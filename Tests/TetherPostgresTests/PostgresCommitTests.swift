import Foundation
import PostgresNIO
import Testing
import TetherStore
import TetherTestSupport

@testable import TetherPostgres

/// A store's write returns only once PostgreSQL has committed it. PostgreSQL answers a statement outside a transaction
/// block before it commits it; a commit that then fails (here: refused by a deferred trigger, as when the server stops
/// between the answer and the commit) must make the call fail, not report a write the table does not hold.
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct PostgresCommitTests {
    @Test func aWriteWhoseCommitFailsIsReportedFailedAndTheTableKeepsItsRecords() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        let kept = Note(content: "committed before the trigger")
        try await store.insert(kept)
        try await store.pool.client.query(
            """
            CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'refused at commit'; END $$
            """
        )
        try await store.pool.client.query(
            """
            CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT OR UPDATE OR DELETE ON "Note"
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()
            """
        )
        var edited = kept
        edited.content = "edited"
        let (_, version) = try #require(try await store.fetchOneWithVersion(id: kept.id))

        await #expect(throws: StoreError.self) { try await store.insert(Note(content: "never committed")) }
        await #expect(throws: StoreError.self) { try await store.update(edited) }
        await #expect(throws: StoreError.self) { try await store.update(edited, expectedVersion: version) }
        await #expect(throws: StoreError.self) { try await store.upsert(edited) }
        await #expect(throws: StoreError.self) { try await store.delete(id: kept.id) }

        #expect(try await store.fetchAll() == [kept])
        #expect(try #require(try await store.fetchOneWithVersion(id: kept.id)).version == version)
    }

    @Test func aWriteThatCommitsReturnsAndIsInTheTable() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        var note = Note(content: "one")
        try await store.insert(note)
        note.content = "two"
        try await store.update(note)
        #expect(try await store.fetchAll() == [note])
        #expect(try await store.delete(id: note.id))
        #expect(try await store.count() == 0)
    }
}
