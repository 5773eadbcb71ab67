import Foundation
import PostgresNIO
import Testing
import TetherNotes
import TetherPostgres
import TetherStore
import TetherTestSupport

/// Several notes servers on one PostgreSQL database: every change reaches every watcher on every server, once, in
/// the database's commit order; a server that loses its feed tells its watchers and subscribes again.
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct NotesSharedDatabaseTests {
    @Test func aChangeMadeThroughOneServerIsPushedOnceToTheWatchersOfBoth() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let first = try await SharedDatabaseServer(url: url)
        let second = try await SharedDatabaseServer(url: url)
        let watchers = [try await first.client(), try await second.client()]
        var streams = [try await watchers[0].changes().makeAsyncIterator()]
        streams.append(try await watchers[1].changes().makeAsyncIterator())

        let throughFirst = try await first.client()
        let throughSecond = try await second.client()
        let note = try await throughFirst.add("through the first server")
        let edited = try await throughSecond.edit(note.id, text: "edited through the second")
        try await throughFirst.remove(note.id)
        let last = try await throughSecond.add("the last change")
        for index in streams.indices {
            #expect(try await streams[index].next() == .added(note))
            #expect(try await streams[index].next() == .edited(edited))
            #expect(try await streams[index].next() == .removed(note.id))
            // Once each: the next change pushed is the next one made.
            #expect(try await streams[index].next() == .added(last))
        }
        #expect(try await throughSecond.list() == [last])
        for client in watchers + [throughFirst, throughSecond] { await client.close() }
        await first.stop()
        await second.stop()
    }

    @Test func aServerThatLosesItsFeedEndsItsWatchersAndSubscribesAgain() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let server = try await SharedDatabaseServer(url: url)
        let watcher = try await server.client()
        var changes = try await watcher.changes().makeAsyncIterator()
        let listening = """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
            """
        #expect(try await count(listening, on: server.store) == 1)
        _ = try await server.store.pool.client.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
            """
        )
        // The watcher may have missed changes: its connection ends.
        do {
            _ = try await changes.next()
            Issue.record("the change stream went on after the server lost its feed")
        } catch let error as NotesError {
            #expect(error.code == .connectionFailed)
        }
        // The server listens again (it retries once a second); a new watcher then gets every change.
        while try await count(listening, on: server.store) == 0 { try await Task.sleep(for: .milliseconds(20)) }
        let again = try await server.client()
        var newChanges = try await again.changes().makeAsyncIterator()
        let note = try await again.add("after the feed came back")
        #expect(try await newChanges.next() == .added(note))
        await watcher.close()
        await again.close()
        await server.stop()
    }

    private func count(_ sql: String, on store: PostgresStore<Note>) async throws -> Int64 {
        let rows = try await store.pool.client.query(.init(unsafeSQL: sql))
        for try await count in rows.decode(Int64.self) { return count }
        return 0
    }
}
