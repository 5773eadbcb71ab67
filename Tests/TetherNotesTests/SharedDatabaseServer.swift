import Foundation
import TetherPostgres
import TetherSockets
import TetherStore

@testable import TetherNotes

/// A notes server on a PostgreSQL database that other servers share, pushing the database's changes, serving
/// loopback until stopped.
final class SharedDatabaseServer: Sendable {
    let store: PostgresStore<Note>
    let listener: TCPListener
    /// One element each time the server's feed is subscribed to (the first is there once `init` returns).
    let feedSubscriptions: AsyncStream<Void>
    private let serving: Task<Void, any Error>

    /// Starts the server and returns once it is subscribed to the database's changes.
    init(url: String) async throws {
        let store = try await PostgresStore<Note>(url: url, tableName: "Note")
        let server = NotesServer(dao: NoteDAO(store: store), changes: .feed { try await store.changes() })
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, maxPendingConnections: 1_024)
        let (ready, subscribed) = AsyncStream.makeStream(of: Void.self)
        serving = Task { try await server.serve(listener) { subscribed.finish() } }
        for await _ in ready {}
        (self.store, self.listener) = (store, listener)
        self.feedSubscriptions = server.feedSubscriptions!
    }

    var port: Int { listener.localPort }

    func client() async throws -> RemoteNoteStore {
        try await RemoteNoteStore.connect(host: "127.0.0.1", port: port)
    }

    func stop() async {
        try? await listener.close()
        serving.cancel()
        _ = await serving.result
        await store.pool.close()
    }
}
