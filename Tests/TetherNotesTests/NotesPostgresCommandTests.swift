import Foundation
import PostgresNIO
import Testing
import TetherConcurrency
import TetherNotes
import TetherPostgres
import TetherStore
import TetherTestSupport

/// `tether serve --notes --postgres URL`, two processes with accounts on one database, as a team would deploy them.
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct NotesPostgresCommandTests {
    typealias Running = NotesCommandTests.Running

    /// Adds user alice (password "alice pw") to the accounts in the database at `url`.
    static func addAlice(_ url: String) async throws {
        let added = try await NotesCommandTests.notes(
            ["user", "add", "alice", "--postgres", url, "--pbkdf2-iterations", "1000"],
            input: "alice pw\n"
        )
        try #require(added.status == 0, "\(added.errors)")
    }

    static let alice = NotesCredentials.password(user: "alice", "alice pw")

    /// Starts `tether serve --notes --postgres url`; returns it and its port once it listens.
    static func server(_ url: String) async throws -> (Running, Int) {
        let server = try Running(["serve", "--notes", "--port", "0", "--postgres", url])
        let first = try await Running.lines(1, from: server.output).first ?? ""
        let prefix = "listening on 127.0.0.1:"
        #expect(first.hasPrefix(prefix), "\(first)")
        return (server, try #require(Int(first.dropFirst(prefix.count))))
    }

    @Test func aNoteAddedThroughOneServerIsPrintedByAWatcherOfTheOther() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        try await Self.addAlice(url)
        let (first, firstPort) = try await Self.server(url)
        defer { first.process.terminate() }
        let (second, secondPort) = try await Self.server(url)
        defer { second.process.terminate() }

        let environment = NotesCommandTests.alice
        let watch = try Running(
            ["notes", "watch", "--remote", "127.0.0.1:\(secondPort)", "--user", "alice", "--verbose"],
            environment: environment
        )
        defer { watch.process.terminate() }
        _ = try await Running.lines(2, from: watch.errors)  // "debug: subscribed": it is watching
        let added = try await NotesCommandTests.notes(
            ["add", "--remote", "127.0.0.1:\(firstPort)", "--user", "alice", "Shared milk"],
            environment: environment
        )
        #expect(added.status == 0, "\(added.errors)")
        let id = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await Running.lines(1, from: watch.output) == ["added \(id) Shared milk"])
        // Both servers list the same notes, and PostgreSQL holds no seed notes (nothing is copied in).
        let listed = try await NotesCommandTests.notes(
            ["list", "--json", "--remote", "127.0.0.1:\(secondPort)", "--user", "alice"],
            environment: environment
        )
        #expect(listed.output.contains(id) && !listed.output.contains("Welcome to MyNotes."))
    }

    @Test func killingOneServerWhileClientsWriteLosesNoAcknowledgedNote() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        try await Self.addAlice(url)
        let (doomed, doomedPort) = try await Self.server(url)
        defer { doomed.process.terminate() }
        let (survivor, survivorPort) = try await Self.server(url)
        defer { survivor.process.terminate() }

        let acknowledged = LockedBox<[UUID]>([])
        let (enough, reached) = AsyncStream.makeStream(of: Void.self)
        let clients = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    // Writes to the doomed server until it dies (an unanswered request fails with connectionFailed)…
                    let notes = try await RemoteNoteStore.connect(
                        host: "127.0.0.1",
                        port: doomedPort,
                        credentials: Self.alice
                    )
                    var next = 0
                    while true {
                        do {
                            let note = try await notes.add("client \(client) note \(next)")
                            next += 1
                            let count = acknowledged.withLock {
                                $0.append(note.id)
                                return $0.count
                            }
                            if count == 300 { reached.finish() }
                        } catch let error as NotesError {
                            #expect(error.code == .connectionFailed)
                            break
                        }
                    }
                    await notes.close()
                    // … then reconnects to the other and goes on.
                    let again = try await RemoteNoteStore.connect(
                        host: "127.0.0.1",
                        port: survivorPort,
                        credentials: Self.alice
                    )
                    for _ in 0..<20 {
                        let note = try await again.add("client \(client) note \(next)")
                        next += 1
                        acknowledged.withLock { $0.append(note.id) }
                    }
                    await again.close()
                }
            }
            for await _ in enough {}
            doomed.process.killNow()
            try await group.waitForAll()
        }
        await doomed.process.exited()
        #expect(doomed.process.terminationReason == .uncaughtSignal)

        let survivorNotes = try await RemoteNoteStore.connect(
            host: "127.0.0.1",
            port: survivorPort,
            credentials: Self.alice
        )
        let stored = Set(try await survivorNotes.list().map(\.id))
        await survivorNotes.close()
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count >= 300 + clients * 20)
        #expect(Set(acked).count == acked.count)
        #expect(Set(acked).subtracting(stored).isEmpty, "acknowledged notes missing after the kill")
        // At most one unacknowledged write per client (in flight at the kill) may have committed.
        #expect(stored.count - acked.count <= clients)
    }

    @Test func theDemosSharedDatabaseStepRunsAndCleansUp() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let demo = try await CommandRun.run(try BuiltProduct.require("tether"), ["demo", "--postgres", url])
        #expect(demo.status == 0, "\(demo.errors)")
        #expect(demo.output.contains("✓ Notes service on PostgreSQL: two servers, changes pushed across them"))
        // Its table is gone, and so is its schema entry.
        let pool = try PostgresPool(url: url)
        let left = try await pool.client.query(
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'tether_demo_%'"
        )
        for try await count in left.decode(Int64.self) { #expect(count == 0) }
        let entries = try await pool.client.query("SELECT count(*) FROM tether_schema")
        for try await count in entries.decode(Int64.self) { #expect(count == 0) }
        await pool.close()
    }
}
