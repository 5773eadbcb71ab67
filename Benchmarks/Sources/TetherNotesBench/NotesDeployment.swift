import Foundation
import GRDB
import TetherNotes
import TetherPostgres
import TetherSockets
import TetherStore

/// The notes servers of one measured deployment, in this process on 127.0.0.1, with the stores under them (which
/// the direct baselines call too).
final class NotesDeployment: Sendable {
    /// What is deployed.
    enum Kind: String, CaseIterable, Sendable {
        /// One server on a SQLite file (a temporary directory), pushing the changes made through it (`.local`).
        case sqlite1 = "sqlite-1"
        /// One server on a PostgreSQL table, pushing the database's change feed (`.feed { store.changes() }`).
        case postgres1 = "postgres-1"
        /// One server on a PostgreSQL table, pushing the changes made through it (`.local`): for the push latency.
        case postgres1Local = "postgres-1-local"
        /// Two servers on one PostgreSQL table, each with its own pool and store and its own feed subscription.
        case postgres2 = "postgres-2"

        /// Whether it needs the PostgreSQL server.
        var usesPostgres: Bool { self != .sqlite1 }
    }

    /// What is deployed.
    let kind: Kind
    /// The servers' ports, one per server.
    let ports: [Int]
    /// The ports of the servers with accounts, one beside each server of ``ports``, on the same store: every client
    /// logs in as ``BenchAccounts/user`` with ``token``.
    let accountPorts: [Int]
    /// The token of ``BenchAccounts/user``.
    let token: String
    /// The servers' stores (one per server), for the direct baselines.
    let daos: [NoteDAO]
    /// The stores under ``daos``.
    let stores: [any RecordStore<Note>]
    private let listeners: [TCPListener]
    private let serving: [Task<Void, any Error>]
    private let pools: [PostgresPool]
    private let postgresStore: PostgresStore<Note>?
    private let directory: URL?
    private let table: String

    private init(
        kind: Kind,
        stores: [any RecordStore<Note>],
        servers: [(listener: TCPListener, task: Task<Void, any Error>)],
        accountServers: [(listener: TCPListener, task: Task<Void, any Error>)],
        token: String,
        pools: [PostgresPool],
        postgresStore: PostgresStore<Note>?,
        directory: URL?,
        table: String
    ) {
        self.kind = kind
        self.stores = stores
        self.daos = stores.map { NoteDAO(store: $0) }
        self.listeners = (servers + accountServers).map(\.listener)
        self.serving = (servers + accountServers).map(\.task)
        self.ports = servers.map(\.listener.localPort)
        self.accountPorts = accountServers.map(\.listener.localPort)
        self.token = token
        self.table = table
        self.pools = pools
        self.postgresStore = postgresStore
        self.directory = directory
    }

    /// Starts the deployment; `postgresURL` is the database of the PostgreSQL kinds. Each deployment has a table (or
    /// file) of its own; without `fsync` the SQLite file is set to `synchronous = OFF` (the PostgreSQL server's
    /// setting is its own).
    static func start(_ kind: Kind, postgresURL: String?, fsync: Bool) async throws -> NotesDeployment {
        let table = "notes_bench_" + UUID().uuidString.prefix(8).lowercased()
        var stores: [any RecordStore<Note>] = []
        var servers: [NotesServer] = []
        var accounts: [NotesAccounts] = []
        var pools: [PostgresPool] = []
        var firstPostgresStore: PostgresStore<Note>?
        var directory: URL?
        if kind == .sqlite1 {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("tether-notes-bench-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            directory = folder
            let store = try SQLiteStore<Note>(url: folder.appendingPathComponent("notes.sqlite"), tableName: "Note")
            if !fsync {
                try await store.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = OFF") }
            }
            stores.append(store)
            servers.append(NotesServer(store: store))
            accounts.append(try BenchAccounts.sqlite(in: folder, notes: store))
        } else {
            guard let postgresURL else { throw BenchError("\(kind.rawValue) needs PostgreSQL") }
            for _ in 0..<(kind == .postgres2 ? 2 : 1) {
                let pool = try PostgresPool(url: postgresURL)
                pools.append(pool)
                let store = try await PostgresStore<Note>(pool: pool, tableName: table)
                firstPostgresStore = firstPostgresStore ?? store
                stores.append(store)
                let changes: NotesChangeSource = kind == .postgres1Local ? .local : .feed { try await store.changes() }
                servers.append(NotesServer(dao: NoteDAO(store: store), changes: changes))
                accounts.append(
                    try await BenchAccounts.postgres(pool: pool, table: table, notes: store, changes: changes)
                )
            }
        }
        try await accounts[0].addUser(BenchAccounts.user, password: nil)
        let token = try await accounts[0].issueToken(for: BenchAccounts.user)
        let accountServers = accounts.map { NotesServer(accounts: $0, limits: BenchAccounts.limits) }
        var running: [(listener: TCPListener, task: Task<Void, any Error>)] = []
        for server in servers {
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, backlog: 1024)
            let (ready, subscribed) = AsyncStream.makeStream(of: Void.self)
            running.append((listener, Task { try await server.serve(listener) { subscribed.finish() } }))
            for await _ in ready {}
        }
        var runningWithAccounts: [(listener: TCPListener, task: Task<Void, any Error>)] = []
        for server in accountServers {
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, backlog: 1024)
            runningWithAccounts.append((listener, Task { try await server.serve(listener) }))
        }
        return NotesDeployment(
            kind: kind,
            stores: stores,
            servers: running,
            accountServers: runningWithAccounts,
            token: token,
            pools: pools,
            postgresStore: firstPostgresStore,
            directory: directory,
            table: table
        )
    }

    /// Adds `notes` to the first store in one transaction.
    func insert(contentsOf notes: [Note]) async throws {
        if let store = stores.first as? SQLiteStore<Note> {
            try await store.insert(contentsOf: notes)
        } else if let store = stores.first as? PostgresStore<Note> {
            try await store.insert(contentsOf: notes)
        } else {
            throw BenchError("no store to fill")
        }
    }

    /// Stops the servers, drops the PostgreSQL table (or removes the SQLite file) and closes the pools.
    func stop() async {
        for listener in listeners { try? await listener.close() }
        // Not awaited: a connection a client left open would hold its server's task.
        for task in serving { task.cancel() }
        try? await postgresStore?.drop()
        if let pool = pools.first {
            try? await PostgresStore<NotesUser>(pool: pool, tableName: table + "_users").drop()
            try? await PostgresStore<NotesAccessToken>(pool: pool, tableName: table + "_tokens").drop()
        }
        for pool in pools { await pool.close() }
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}
