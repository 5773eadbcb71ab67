import Foundation
import TetherNotes
import TetherSockets
import TetherStore

/// One note edited: through the notes service (a `RemoteNoteStore` on loopback to a `NotesServer` in this process)
/// and as the same `NoteDAO` calls the server makes, in process. Both on a `MemoryStore`, so that a file's work
/// does not drown the difference.
enum NotesWorkloads {
    static func service() -> Workload {
        Workload {
            let server = NotesServer(store: MemoryStore<Note>())
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
            let serving = Task { try await server.serve(listener) }
            let client = try await RemoteNoteStore.connect(host: "127.0.0.1", port: listener.localPort)
            let note = try await client.add("first")
            return WorkloadSession(
                operation: { _ = try await client.edit(note.id, text: "edited") },
                end: {
                    await client.close()
                    try await listener.close()
                    serving.cancel()
                    _ = await serving.result
                }
            )
        }
    }

    /// What the server does for an edit: find the note, change its text, modify it.
    static func dao() -> Workload {
        Workload {
            let dao = NoteDAO(store: MemoryStore<Note>())
            let note = Note(content: "first")
            try await dao.create(note)
            return WorkloadSession {
                guard var found = try await dao.findById(Note(id: note.id, content: "")) else {
                    throw HarnessError("no note")
                }
                found.content = "edited"
                try await dao.modify(found)
            }
        }
    }
}
