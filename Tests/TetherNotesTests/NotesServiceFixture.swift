import Foundation
import NIOCore
import TetherNotes
import TetherSockets
import TetherStore

/// A notes server on a SQLite file in a fresh folder, serving loopback until stopped.
final class NotesServiceFixture: Sendable {
    let folder: URL
    let store: SQLiteStore<Note>
    let server: NotesServer
    let listener: TCPListener
    private let serving: Task<Void, any Error>

    init(maxPayloadLength: Int = NotesWireFormat.maxPayloadLength) async throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try SQLiteStore<Note>(url: folder.appendingPathComponent("NotesList.sqlite3"), tableName: "Note")
        server = NotesServer(store: store, maxPayloadLength: maxPayloadLength)
        listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, maxPendingConnections: 2_048)
        let (server, listener) = (self.server, self.listener)
        serving = Task { try await server.serve(listener) }
    }

    var port: Int { listener.localPort }

    func client() async throws -> RemoteNoteStore {
        try await RemoteNoteStore.connect(host: "127.0.0.1", port: port)
    }

    /// A plain connection, for writing bytes no client would.
    func raw() async throws -> TCPConnection {
        try await TCPConnection.connect(host: "127.0.0.1", port: port)
    }

    func stop() async {
        try? await listener.close()
        serving.cancel()
        _ = await serving.result
        try? FileManager.default.removeItem(at: folder)
    }
}
