import Foundation
import TetherNotes
import TetherSockets
import TetherStore

extension DemoSteps {
    /// The notes service: a server on a SQLite file, a watcher subscribed to it, and a writer whose changes the
    /// watcher sees pushed.
    static func notesService() async throws -> String {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-notes-service-demo-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore<Note>(url: folder.appendingPathComponent("NotesList.sqlite3"), tableName: "Note")
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let serving = Task { try await NotesServer(store: store).serve(listener) }
        defer { serving.cancel() }
        let watcher = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listener.localPort)
        let writer = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listener.localPort)
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
        try await listener.close()
        guard pushed.count == 3, case .removed(note.id) = pushed[2] else {
            throw DemoFailure(description: "the watcher saw \(pushed)")
        }
        return "a server on SQLite over STX frames; a watcher saw the writer's add, edit and remove pushed"
    }
}
