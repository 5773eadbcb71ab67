import Foundation
import TetherNotes
import TetherSockets
import TetherStore

extension DemoSteps {
    /// The notes service with accounts: a server on a SQLite file, users alice and bob; alice's watcher sees her
    /// writer's changes pushed, bob sees none of her notes, and a wrong password is refused.
    static func notesService() async throws -> String {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-notes-service-demo-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let accounts = try NotesAccounts.sqlite(directory: folder, passwordIterations: 10_000)
        let alice = NotesCredentials.password(user: "alice", "alice's demo password")
        let bob = NotesCredentials.password(user: "bob", "bob's demo password")
        for user in [alice, bob] {
            guard case .password(let password) = user.secret else { continue }
            try await accounts.addUser(user.user, password: password)
        }
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let serving = Task { try await NotesServer(accounts: accounts).serve(listener) }
        defer { serving.cancel() }
        let port = listener.localPort
        try await watchWriterChanges(watchOn: port, writeThrough: port, as: alice)
        let kept = try await RemoteNoteStore.connect(host: "127.0.0.1", port: port, credentials: alice)
        _ = try await kept.add("alice's only")
        await kept.close()
        let other = try await RemoteNoteStore.connect(host: "127.0.0.1", port: port, credentials: bob)
        let seen = try await other.list()
        await other.close()
        guard seen.isEmpty else { throw DemoFailure(description: "bob saw \(seen.count) of alice's notes") }
        do {
            let wrong = NotesCredentials.password(user: "alice", "a guess")
            _ = try await RemoteNoteStore.connect(host: "127.0.0.1", port: port, credentials: wrong)
            throw DemoFailure(description: "a wrong password was accepted")
        } catch let error as NotesError where error.code == .authenticationFailed {}
        try await listener.close()
        return "a server with accounts on SQLite: alice's watcher saw her add, edit and remove pushed; "
            + "bob saw none of her notes; a wrong password was refused"
    }

    /// A watcher on one server and a writer on another (or the same), logged in with `credentials` (nil: anonymous
    /// servers): the writer adds, edits and removes a note;
    /// throws unless the watcher saw those three changes pushed, in order.
    static func watchWriterChanges(
        watchOn watchPort: Int,
        writeThrough writePort: Int,
        as credentials: NotesCredentials? = nil
    ) async throws {
        let watcher = try await RemoteNoteStore.connect(host: "127.0.0.1", port: watchPort, credentials: credentials)
        let writer = try await RemoteNoteStore.connect(host: "127.0.0.1", port: writePort, credentials: credentials)
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
