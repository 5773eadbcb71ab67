import Foundation
import NIOConcurrencyHelpers
import TetherNotes
import TetherStore

/// One watcher of the notes soak: logged in as one user on one server, it keeps a copy of the user's notes from a
/// list and the changes pushed after it. When its stream ends with an error (the server closes it when it loses the
/// database's feed) it connects again, watches again and lists again, as the Deploying article tells clients to.
///
/// Every note pushed to it must be its user's (texts start with `<user>/`); at the end its copy must equal what the
/// database holds.
final class NotesSoakWatcher: Sendable {
    let user: String
    let server: Int
    private let token: String
    private let port: Int
    private let tally: NotesSoakTally
    private let copy = NIOLockedValueBox([UUID: String]())
    private let running = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(user: String, token: String, server: Int, port: Int, tally: NotesSoakTally) {
        self.user = user
        self.token = token
        self.server = server
        self.port = port
        self.tally = tally
    }

    /// The user's notes as this watcher knows them.
    var notes: [UUID: String] { copy.withLockedValue { $0 } }

    /// Starts watching; returns once the first subscription listens (or failed to within 60 s).
    func start() async {
        let (ready, signal) = AsyncStream.makeStream(of: Void.self)
        running.withLockedValue { $0 = Task { await self.watch(ready: signal) } }
        for await _ in ready { break }
    }

    /// Stops watching.
    func stop() async {
        let task = running.withLockedValue { $0 }
        task?.cancel()
        await task?.value
    }

    private func watch(ready: AsyncStream<Void>.Continuation) async {
        var first = true
        while !Task.isCancelled {
            let deadline = ContinuousClock.now + .seconds(3_600)
            guard
                let store = await NotesSoakClient.connect(
                    user: user,
                    token: token,
                    port: port,
                    tally: tally,
                    by: deadline
                )
            else { break }
            if !first { tally.withLockedValue { $0.reconnections += 1 } }
            do {
                let stream = try await store.changes()
                let listed = try await store.list()
                copy.withLockedValue { copy in
                    copy = NotesSoakClient.texts(of: listed)
                }
                if first { ready.finish() }
                first = false
                try await withTaskCancellationHandler {
                    for try await change in stream { receive(change) }
                } onCancel: {
                    Task { await store.close() }
                }
            } catch  where !Task.isCancelled {
                tally.withLockedValue {
                    $0.fail("watch: " + NotesSoakClient.name(of: error))
                    $0.resubscriptions += 1
                }
            } catch {}
            await store.close()
        }
        ready.finish()
    }

    private func receive(_ change: NoteChange) {
        tally.withLockedValue { $0.changesReceived += 1 }
        switch change {
        case .added(let note), .edited(let note):
            guard note.content.hasPrefix("\(user)/") else {
                tally.withLockedValue { $0.violate("\(user)'s watcher on server \(server) got \(note.content)") }
                return
            }
            copy.withLockedValue { $0[note.id] = note.content }
        case .removed(let id):
            copy.withLockedValue { $0[id] = nil }
        }
    }
}
