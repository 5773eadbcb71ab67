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
        let watcher = try await RemoteNoteStore.connect(host: "127.0.0.1", port: servers[1].listener.localPort)
        let writer = try await RemoteNoteStore.connect(host: "127.0.0.1", port: servers[0].listener.localPort)
        let changes = try await watcher.changes()
        let note = try await writer.add("Buy milk")
        _ = try await writer.edit(note.id, text: "Buy oat milk")
        try await writer.remove(note.id)
        var pushed: [NoteChange] = []
        for try await change in changes {
            pushed.append(change)
            if pushed.count == 3 { break }
        }
        await writer.close()
        await watcher.close()
        for server in servers { try await server.listener.close() }
        try await stores[0].drop()
        await pool.close()
        guard pushed.count == 3, case .removed(note.id) = pushed[2] else {
            throw DemoFailure(description: "the watcher saw \(pushed)")
        }
        return "two servers on one database; a watcher of one saw the add, edit and remove made through the other"
    }
}
