import Foundation
import PostgresNIO
import Testing
import TetherNotes
import TetherPostgres
import TetherSockets
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
        // Each change is awaited before the next write: the feed pushes a note as the table holds it when it reads it.
        let note = try await throughFirst.add("through the first server")
        for index in streams.indices { #expect(try await streams[index].next() == .added(note)) }
        let edited = try await throughSecond.edit(note.id, text: "edited through the second")
        for index in streams.indices { #expect(try await streams[index].next() == .edited(edited)) }
        try await throughFirst.remove(note.id)
        for index in streams.indices { #expect(try await streams[index].next() == .removed(note.id)) }
        let last = try await throughSecond.add("the last change")
        // Once each: the next change pushed is the next one made.
        for index in streams.indices { #expect(try await streams[index].next() == .added(last)) }
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
        var subscriptions = server.feedSubscriptions.makeAsyncIterator()
        #expect(await subscriptions.next() != nil)  // the first subscription, made before the server accepted
        #expect(try await count(Self.listening, on: server.store) == 1)
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
        #expect(await subscriptions.next() != nil)
        #expect(try await count(Self.listening, on: server.store) == 1)
        let again = try await server.client()
        var newChanges = try await again.changes().makeAsyncIterator()
        let note = try await again.add("after the feed came back")
        #expect(try await newChanges.next() == .added(note))
        await watcher.close()
        await again.close()
        await server.stop()
    }

    @Test func aSubscriberThatJoinsWhileTheFeedReconnectsIsHeldUntilItListensAndMissesNothing() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let server = try await SharedDatabaseServer(url: url)
        let watcher = try await server.client()
        var changes = try await watcher.changes().makeAsyncIterator()
        var subscriptions = server.feedSubscriptions.makeAsyncIterator()
        #expect(await subscriptions.next() != nil)
        _ = try await server.store.pool.client.query(.init(unsafeSQL: Self.terminateListeners))
        // The first watcher's connection ends when the server learns its feed is lost: the feed is down from then on.
        do {
            _ = try await changes.next()
            Issue.record("the change stream went on after the server lost its feed")
        } catch let error as NotesError {
            #expect(error.code == .connectionFailed)
        }
        let late = try await server.client()
        // Answered only once the feed listens again; a change made right after is pushed.
        var lateChanges = try await late.changes().makeAsyncIterator()
        let note = try await late.add("made as soon as the subscription was answered")
        #expect(try await lateChanges.next() == .added(note))
        await watcher.close()
        await late.close()
        await server.stop()
    }

    static let terminateListeners = """
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
        """

    /// The number of connections to this database listening for notifications.
    static let listening = """
        SELECT count(*) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
        """

    func count(_ sql: String, on store: PostgresStore<Note>) async throws -> Int64 {
        let rows = try await store.pool.client.query(.init(unsafeSQL: sql))
        for try await count in rows.decode(Int64.self) { return count }
        return 0
    }
}

extension NotesSharedDatabaseTests {
    @Test func aServerOnTwoListenersSharesOneSubscriptionAndPushesEachChangeOnce() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let store = try await PostgresStore<Note>(url: url, tableName: "Note")
        let server = NotesServer(dao: NoteDAO(store: store), changes: .feed { try await store.changes() })
        var listeners: [TCPListener] = []
        var serving: [Task<Void, any Error>] = []
        for _ in 0..<2 {
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
            let (ready, subscribed) = AsyncStream.makeStream(of: Void.self)
            serving.append(Task { try await server.serve(listener) { subscribed.finish() } })
            for await _ in ready {}
            listeners.append(listener)
        }
        #expect(try await count(Self.listening, on: store) == 1)
        let watcher = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listeners[0].localPort)
        let writer = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listeners[1].localPort)
        var changes = try await watcher.changes().makeAsyncIterator()
        let note = try await writer.add("once")
        let last = try await writer.add("the next one")
        #expect(try await changes.next() == .added(note))
        #expect(try await changes.next() == .added(last))
        await watcher.close()
        await writer.close()
        // The subscription ends with the last listener's serving.
        try await listeners[0].close()
        _ = await serving[0].result
        #expect(try await count(Self.listening, on: store) == 1)
        try await listeners[1].close()
        _ = await serving[1].result
        while try await count(Self.listening, on: store) > 0 { try await Task.sleep(for: .milliseconds(10)) }
        await store.pool.close()
    }
}
