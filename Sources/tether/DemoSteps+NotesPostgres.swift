import Foundation
import TetherNotes
import TetherPostgres
import TetherSockets
import TetherStore

extension DemoSteps {
    /// The notes service on PostgreSQL: two servers on one database (a table of the demo's own, dropped at the end),
    /// a watcher on the second sees what a writer does through the first.
    static func notesServiceOnPostgres(url: String) async throws -> String {
        let table = "tether_demo_\(UUID().uuidString.prefix(8).lowercased())"
        let pool = try PostgresPool(url: url)
        var servers: [(listener: TCPListener, serving: Task<Void, any Error>)] = []
        defer { for server in servers { server.serving.cancel() } }
        var stores: [PostgresStore<Note>] = []
        for _ in 0..<2 {
            let store = try await PostgresStore<Note>(pool: pool, tableName: table)
            stores.append(store)
            let server = NotesServer(dao: NoteDAO(store: store), changes: .feed { try await store.changes() })
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
            let (ready, subscribed) = AsyncStream.makeStream(of: Void.self)
            servers.append((listener, Task { try await server.serve(listener) { subscribed.finish() } }))
            for await _ in ready {}
        }
        try await watchWriterChanges(
            watchOn: servers[1].listener.localPort,
            writeThrough: servers[0].listener.localPort
        )
        for server in servers { try await server.listener.close() }
        try await stores[0].drop()
        await pool.close()
        return "two servers on one database; a watcher of one saw the add, edit and remove made through the other"
    }
}
