import Foundation
import TetherNotes
import TetherStore

/// Connecting and naming errors for the notes soak's clients.
enum NotesSoakClient {
    /// Connects and logs in as `user` with `token`, trying again (100 ms, doubling to 1 s) while the service refuses
    /// or cannot be reached; `nil` at `deadline`.
    static func connect(
        user: String,
        token: String,
        port: Int,
        tally: NotesSoakTally,
        by deadline: ContinuousClock.Instant
    ) async -> RemoteNoteStore? {
        var pause = Duration.milliseconds(100)
        while ContinuousClock.now < deadline {
            do {
                return try await RemoteNoteStore.connect(
                    host: "127.0.0.1",
                    port: port,
                    credentials: .token(user: user, token),
                    timeout: .seconds(15)
                )
            } catch {
                let name = name(of: error)
                tally.withLockedValue {
                    $0.fail("connect: " + name)
                    if name == "authenticationFailed" { $0.refusedLogins += 1 }
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
            }
        }
        return nil
    }

    /// The name of a notes error's code, or the error's type.
    static func name(of error: any Error) -> String {
        if let error = error as? NotesError { return error.code.description }
        return String(describing: type(of: error))
    }

    /// Each note's text by its id.
    static func texts(of notes: [Note]) -> [UUID: String] {
        Dictionary(notes.map { ($0.id, $0.content) }, uniquingKeysWith: { first, _ in first })
    }
}
