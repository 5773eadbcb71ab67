import Foundation
import Testing
import TetherNotes
import TetherPostgres
import TetherSockets
import TetherStore
import TetherTestSupport

/// Two notes servers with accounts on one PostgreSQL database: a user's changes reach that user's watchers on both
/// servers, and no other user's; a login works on either server; no request is served before one.
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct NotesSharedDatabaseAccountsTests {
    /// A server with accounts on the database at `url`, serving loopback.
    final class Server: Sendable {
        let listener: TCPListener
        let accounts: NotesAccounts
        private let serving: Task<Void, any Error>

        init(url: String) async throws {
            accounts = try await postgresAccounts(url: url, passwordIterations: NotesServiceFixture.iterations)
            listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
            let (server, listener) = (NotesServer(accounts: accounts), listener)
            serving = Task { try await server.serve(listener) }
        }

        func client(_ user: String) async throws -> RemoteNoteStore {
            try await RemoteNoteStore.connect(
                host: "127.0.0.1",
                port: listener.localPort,
                credentials: .password(user: user, NotesServiceFixture.password(of: user))
            )
        }

        func stop() async {
            try? await listener.close()
            serving.cancel()
            _ = await serving.result
        }
    }

    @Test func eachUserWatchesOnlyTheirOwnChangesThroughEitherServer() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let first = try await Server(url: url)
        for user in ["alice", "bob"] {
            try await first.accounts.addUser(user, password: NotesServiceFixture.password(of: user))
        }
        let second = try await Server(url: url)
        // Watchers of both users on the second server; writers on the first.
        let aliceWatcher = try await second.client("alice")
        let bobWatcher = try await second.client("bob")
        var aliceChanges = try await aliceWatcher.changes().makeAsyncIterator()
        var bobChanges = try await bobWatcher.changes().makeAsyncIterator()
        let alice = try await first.client("alice")
        let bob = try await first.client("bob")

        let secret = try await alice.add("alice's, through the first server")
        let edited = try await alice.edit(secret.id, text: "alice's, edited")
        let own = try await bob.add("bob's own")
        // The feed reports a note as the database holds it when the server reads it: the add may carry the edit.
        let added = try await aliceChanges.next()
        #expect(added == .added(secret) || added == .added(edited))
        #expect(try await aliceChanges.next() == .edited(edited))
        // Bob's first change is his own: alice's two never reached him.
        #expect(try await bobChanges.next() == .added(own))
        #expect(try await bobWatcher.list() == [own])
        let reach = await #expect(throws: NotesError.self) { try await bob.remove(secret.id) }
        #expect(reach?.code == .notFound)
        #expect(try await aliceWatcher.list() == [edited])
        // Bob's next pushed change is his next one: the removal alice makes now is hers alone.
        try await alice.remove(secret.id)
        #expect(try await aliceChanges.next() == .removed(secret.id))
        try await bob.remove(own.id)
        #expect(try await bobChanges.next() == .removed(own.id))
        for client in [aliceWatcher, bobWatcher, alice, bob] { await client.close() }
        await first.stop()
        await second.stop()
    }

    @Test func aWrongPasswordIsRefusedOnEitherServerAndServesNothing() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let first = try await Server(url: url)
        try await first.accounts.addUser("alice", password: NotesServiceFixture.password(of: "alice"))
        let second = try await Server(url: url)
        for server in [first, second] {
            let refused = await #expect(throws: NotesError.self) {
                try await RemoteNoteStore.connect(
                    host: "127.0.0.1",
                    port: server.listener.localPort,
                    credentials: .password(user: "alice", "wrong")
                )
            }
            #expect(refused?.code == .authenticationFailed)
            let anonymous = try await RemoteNoteStore.connect(host: "127.0.0.1", port: server.listener.localPort)
            let list = await #expect(throws: NotesError.self) { try await anonymous.list() }
            #expect(list?.code == .notAuthenticated)
            await anonymous.close()
        }
        await first.stop()
        await second.stop()
    }
}
