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
        try await watchWriterChanges(watchOn: listener.localPort, writeThrough: listener.localPort)
        try await listener.close()
        return "a server on SQLite over STX frames; a watcher saw the writer's add, edit and remove pushed"
    }

    /// A watcher on one server and a writer on another (or the same): the writer adds, edits and removes a note;
    /// throws unless the watcher saw those three changes pushed, in order.
    static func watchWriterChanges(watchOn watchPort: Int, writeThrough writePort: Int) async throws {
        let watcher = try await RemoteNoteStore.connect(host: "127.0.0.1", port: watchPort)
        let writer = try await RemoteNoteStore.connect(host: "127.0.0.1", port: writePort)
        var changes = try await watcher.changes().makeAsyncIterator()
        // Each change is awaited before the next write: a server on a shared database pushes a note as the
        // database holds it when it reads it.
        var pushed: [NoteChange] = []
        let note = try await writer.add("Buy milk")
        if let change = try await changes.next() { pushed.append(change) }
        let edited = try await writer.edit(note.id, text: "Buy oat milk")
        if let change = try await changes.next() { pushed.append(change) }
        try await writer.remove(note.id)
        if let change = try await changes.next() { pushed.append(change) }
        await writer.close()
        await watcher.close()
        guard pushed == [.added(note), .edited(edited), .removed(note.id)] else {
            throw DemoFailure(description: "the watcher saw \(pushed)")
        }
    }
}
