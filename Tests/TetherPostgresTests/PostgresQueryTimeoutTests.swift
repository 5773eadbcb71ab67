import Foundation
import NIOCore
import PostgresNIO
import Testing
import TetherStore
import TetherTestSupport

@testable import TetherPostgres

/// ``PostgresConfiguration/queryTimeout``: a call the database does not answer fails with `io` at the deadline, its
/// connection closed and its write not committed; a bad deadline is refused.
@Suite(needsPostgreSQL, .timeLimit(.minutes(1)))
struct PostgresQueryTimeoutTests {
    /// The update waits for a row lock that another session holds for as long as the call is not answered: only the
    /// deadline can end it. (The store is opened on a pool without the short deadline: opening waits for the schema's
    /// advisory lock, which the other tests' stores take too.)
    @Test func aCallTheDatabaseDoesNotAnswerFailsWithIOAtItsDeadlineAndCommitsNothing() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        let note = Note(content: "before")
        try await store.insert(note)
        let (_, version) = try #require(try await store.fetchOneWithVersion(id: note.id))
        var edited = note
        edited.content = "never committed"
        let (id, blob) = try RecordRowCoding<Note>.encode(edited)
        var settings = try configuration(url)
        settings.queryTimeout = .seconds(1)
        let short = try PostgresPool(configuration: settings)
        let holder = try PostgresPool(url: url)
        let error = try await holder.client.withConnection { connection in
            try await connection.query("BEGIN", logger: PostgresPool.logger)
            try await connection.query("SELECT id FROM \"Note\" FOR UPDATE", logger: PostgresPool.logger)
            let error = await expectStoreError(.io) {
                try await short.withTransaction("update of Note") { connection in
                    try await connection.query(
                        """
                        UPDATE "Note" SET record = \(ByteBuffer(bytes: blob)), version = version + 1 WHERE id = \(id)
                        """,
                        logger: PostgresPool.logger
                    )
                }
            }
            try await connection.query("ROLLBACK", logger: PostgresPool.logger)
            return error
        }
        #expect(error?.message.contains("did not answer within 1.0 seconds") == true, "\(String(describing: error))")
        let after = try #require(try await store.fetchOneWithVersion(id: note.id))
        #expect(after.record == note)
        #expect(after.version == version)
        await holder.close()
        await short.close()
    }

    @Test(arguments: [Duration.zero, .seconds(-1), .nanoseconds(-1)])
    func aQueryTimeoutThatIsNotPositiveIsRefused(_ timeout: Duration) async throws {
        var settings = try PostgresConfiguration(url: "postgres://ann@127.0.0.1/notes")
        settings.queryTimeout = timeout
        await expectStoreError(.invalidArgument) { try PostgresPool(configuration: settings) }
    }

    @Test(arguments: [Duration.zero, .seconds(-5)])
    func aConnectionTimeoutThatIsNotPositiveIsRefused(_ timeout: Duration) async throws {
        var settings = try PostgresConfiguration(url: "postgres://ann@127.0.0.1/notes")
        settings.connectionTimeout = timeout
        await expectStoreError(.invalidArgument) { try PostgresPool(configuration: settings) }
    }

    @Test(arguments: ["nan", "NaN", "-1", "0", "-0", "inf", "infinity", "1e10", "ten", "", "30s"])
    func aBadQueryTimeoutParameterIsRefused(_ text: String) async throws {
        let url = "postgres://ann@127.0.0.1/notes?query_timeout=\(text)"
        let error = await expectStoreError(.invalidArgument) { try PostgresConfiguration(url: url) }
        #expect(error?.message.contains("query_timeout") == true, "\(String(describing: error))")
    }

    @Test func theQueryTimeoutParameterIsSecondsOrNoneAndDefaultsTo30Seconds() throws {
        let base = "postgres://ann@127.0.0.1/notes"
        #expect(try PostgresConfiguration(url: base).queryTimeout == .seconds(30))
        #expect(try PostgresConfiguration(url: base + "?query_timeout=2.5").queryTimeout == .milliseconds(2500))
        #expect(try PostgresConfiguration(url: base + "?query_timeout=none").queryTimeout == nil)
        let socket = try PostgresConfiguration(url: "postgres://ann@/n?host=/tmp&query_timeout=7")
        #expect(socket.queryTimeout == .seconds(7))
    }

    @Test func aPoolWithNoQueryTimeoutStillAnswers() async throws {
        var settings = try configuration(try await freshDatabase())
        settings.queryTimeout = nil
        let store = try await PostgresStore<Note>(pool: try PostgresPool(configuration: settings))
        let note = Note(content: "no deadline")
        try await store.insert(note)
        #expect(try await store.fetchAll() == [note])
    }
}
