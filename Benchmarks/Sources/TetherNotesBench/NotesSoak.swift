import Foundation
import NIOConcurrencyHelpers
import TetherNotes
import TetherPostgres
import TetherSockets
import TetherStore

/// `tether-notes-bench soak`: the notes service on PostgreSQL under a long mixed load with database restarts (see
/// ``NotesSoakOptions/usage``). Returns whether it passed.
enum NotesSoak {
    static func run(_ options: NotesSoakOptions) async throws -> Bool {
        let postgres = try ThrowawayPostgres.start(fsync: !options.noFsync)
        defer { postgres.stop() }
        print("PostgreSQL on 127.0.0.1:\(postgres.port), fsync \(options.noFsync ? "off" : "on")")
        let tally = NotesSoakTally(NotesSoakCounters())
        var pools: [PostgresPool] = []
        var servers: [(listener: TCPListener, task: Task<Void, any Error>)] = []
        var firstAccounts: NotesAccounts?
        for _ in 0..<2 {
            let pool = try PostgresPool(url: postgres.url)
            pools.append(pool)
            let accounts = try await accounts(pool: pool)
            firstAccounts = firstAccounts ?? accounts
            let limits = NotesServerLimits(connectionsPerAddress: 4_096, connectionsPerUser: 4_096)
            let server = NotesServer(accounts: accounts, limits: limits)
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, backlog: 1024)
            servers.append((listener, Task { try await server.serve(listener) }))
        }
        guard let accounts = firstAccounts else { return false }
        var tokens: [(user: String, token: String)] = []
        for number in 0..<options.users {
            let user = "soak\(number)"
            _ = try await accounts.addUser(user, password: nil)
            tokens.append((user, try await accounts.issueToken(for: user)))
        }
        let ports = servers.map(\.listener.localPort)
        print("servers on 127.0.0.1:\(ports.map(String.init).joined(separator: ", :")); \(options.users) users")

        var watchers: [NotesSoakWatcher] = []
        for (user, token) in tokens {
            for (server, port) in ports.enumerated() {
                let watcher = NotesSoakWatcher(user: user, token: token, server: server, port: port, tally: tally)
                await watcher.start()
                watchers.append(watcher)
            }
        }
        let baseline = NotesSoakSample.now(seconds: 0)
        let started = ContinuousClock.now
        let deadline = started + .seconds(options.duration)
        var samples: [NotesSoakSample] = [baseline]
        let logins = tokens
        var stores: [String: PostgresStore<Note>] = [:]
        for (user, _) in tokens {
            guard let record = try await accounts.user(named: user) else { continue }
            stores[user] = try await PostgresStore<Note>(pool: pools[0], tableName: record.notesTable)
        }
        let directStores = stores
        let writing = Task {
            await withTaskGroup(of: Void.self) { group in
                for (userIndex, (user, token)) in logins.enumerated() {
                    for index in 0..<options.writers {
                        let port = ports[(userIndex + index) % ports.count]
                        let seed = options.seed &* 1_000 &+ UInt64(userIndex * 100 + index)
                        group.addTask {
                            var writer = NotesSoakWriter(
                                user: user,
                                token: token,
                                port: port,
                                index: index,
                                seed: seed,
                                tally: tally
                            )
                            writer.direct = directStores[user]
                            await writer.run(until: deadline)
                        }
                    }
                }
            }
        }
        var nextRestart = options.restartEvery > 0 ? started + .seconds(options.restartEvery) : nil
        var nextSample = started + .seconds(options.interval)
        while ContinuousClock.now < deadline {
            let wake = min(nextSample, nextRestart ?? deadline, deadline)
            try? await Task.sleep(until: wake, clock: .continuous)
            let seconds = Double((ContinuousClock.now - started).components.seconds)
            if let restart = nextRestart, ContinuousClock.now >= restart, restart < deadline - .seconds(5) {
                let immediate = tally.withLockedValue { $0.restarts } % 2 == 1
                print("\(Int(seconds)) s: restarting PostgreSQL (\(immediate ? "immediate" : "fast") shutdown)")
                try await offLoop { try postgres.restart(immediate: immediate) }
                tally.withLockedValue { $0.restarts += 1 }
                print("\(Int(seconds)) s: PostgreSQL accepts connections again")
                nextRestart = restart + .seconds(options.restartEvery)
            }
            if ContinuousClock.now >= nextSample {
                let sample = NotesSoakSample.now(seconds: seconds)
                samples.append(sample)
                let counters = tally.withLockedValue { $0 }
                print(sample.line + "; \(counters.acknowledged) acknowledged, \(counters.violationCount) violations")
                nextSample = nextSample + .seconds(options.interval)
            }
        }
        // A writer waits for a connection or a list for at most 60 s after the deadline; one still waiting 120 s after
        // it waits for a request the service never answered.
        if await !finishes(writing, within: .seconds(120)) {
            let waits = tally.withLockedValue { $0.waits }
            for (writer, wait) in waits.sorted(by: { $0.key < $1.key }) {
                tally.withLockedValue {
                    $0.violate("\(writer): no answer for \(ContinuousClock.now - wait.since) to \(wait.what)")
                }
            }
            tally.withLockedValue { $0.violate("writers did not end within 120 s of the deadline") }
            let report = NotesSoakReport(counters: tally.withLockedValue { $0 }, samples: samples, options: options)
            for line in report.lines() { print(line) }
            return false
        }
        print("writing stopped; waiting for the watchers to catch up")
        await converge(watchers, tokens: tokens, port: ports[0], tally: tally)
        for watcher in watchers { await watcher.stop() }
        samples.append(NotesSoakSample.now(seconds: Double((ContinuousClock.now - started).components.seconds)))
        for server in servers { try? await server.listener.close() }
        for server in servers { server.task.cancel() }
        for pool in pools { await pool.close() }
        let counters = tally.withLockedValue { $0 }
        let report = NotesSoakReport(counters: counters, samples: samples, options: options)
        for line in report.lines() { print(line) }
        return report.passed
    }

    /// Waits (up to 60 s) until every watcher's copy equals its user's notes as listed through a new connection;
    /// each watcher that does not is a violation.
    private static func converge(
        _ watchers: [NotesSoakWatcher],
        tokens: [(user: String, token: String)],
        port: Int,
        tally: NotesSoakTally
    ) async {
        var truth: [String: [UUID: String]] = [:]
        for (user, token) in tokens {
            let deadline = ContinuousClock.now + .seconds(60)
            while truth[user] == nil, ContinuousClock.now < deadline {
                guard
                    let store = await NotesSoakClient.connect(
                        user: user,
                        token: token,
                        port: port,
                        tally: tally,
                        by: deadline
                    )
                else { break }
                if let notes = try? await store.list() {
                    truth[user] = NotesSoakClient.texts(of: notes)
                }
                await store.close()
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        var behind = watchers
        while !behind.isEmpty, ContinuousClock.now < deadline {
            behind = behind.filter { $0.notes != truth[$0.user] }
            if !behind.isEmpty { try? await Task.sleep(for: .milliseconds(100)) }
        }
        for watcher in behind {
            let copy = watcher.notes
            let expected = truth[watcher.user] ?? [:]
            let missing = expected.filter { copy[$0.key] != $0.value }.count
            let extra = copy.filter { expected[$0.key] == nil }.count
            tally.withLockedValue {
                $0.violate(
                    "\(watcher.user)'s watcher on server \(watcher.server) did not catch up within 60 s: "
                        + "\(missing) notes missing or different, \(extra) extra"
                )
            }
        }
    }

    /// Whether `task` ends within `limit`.
    private static func finishes(_ task: Task<Void, Never>, within limit: Duration) async -> Bool {
        let ended = NIOLockedValueBox(false)
        let waiter = Task {
            await task.value
            ended.withLockedValue { $0 = true }
        }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline, !ended.withLockedValue({ $0 }) {
            try? await Task.sleep(for: .milliseconds(200))
        }
        _ = waiter
        return ended.withLockedValue { $0 }
    }

    /// Runs `work` (which waits for a process) on a thread of its own, not on the concurrency pool's.
    private static func offLoop(_ work: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                do {
                    try work()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Accounts in `pool`'s database as `tether serve --notes --postgres` keeps them: tables `notes_users` and
    /// `notes_tokens`, and each user's notes in a table of their own with that table's change feed.
    private static func accounts(pool: PostgresPool) async throws -> NotesAccounts {
        NotesAccounts(
            users: try await PostgresStore<NotesUser>(pool: pool, tableName: "notes_users"),
            tokens: try await PostgresStore<NotesAccessToken>(pool: pool, tableName: "notes_tokens"),
            passwordIterations: 1_000,
            notes: { user in
                let store = try await PostgresStore<Note>(pool: pool, tableName: user.notesTable)
                return NotesSpace(store: store, changes: .feed { try await store.changes() })
            },
            dropNotes: { user in try await PostgresStore<Note>(pool: pool, tableName: user.notesTable).drop() }
        )
    }
}
