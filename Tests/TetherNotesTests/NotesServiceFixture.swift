import Foundation
import NIOCore
import TetherConcurrency
import TetherCore
import TetherSockets
import TetherStore

@testable import TetherNotes

/// A notes server with accounts on a SQLite file in a fresh folder, serving loopback until stopped. Users `alice` and
/// `bob` exist (passwords ``password(of:)``); the login throttle goes by ``clock``, which only the test moves.
final class NotesServiceFixture: Sendable {
    let folder: URL
    let accounts: NotesAccounts
    let server: NotesServer
    let listener: TCPListener
    /// Alice's notes, as the server keeps them.
    let store: any RecordStore<Note>
    /// The time the server's login throttle sees.
    let clock = LockedBox<Duration>(.zero)
    private let serving: Task<Void, any Error>

    /// PBKDF2 iterations of the fixture's users: few, so that a test logs in a thousand times in seconds.
    static let iterations = 1_000

    init(
        maxPayloadLength: Int = NotesWireFormat.maxPayloadLength,
        limits: NotesServerLimits = NotesServerLimits()
    ) async throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesTests-\(UUID().uuidString)", isDirectory: true)
        accounts = try NotesAccounts.sqlite(directory: folder, passwordIterations: Self.iterations)
        let alice = try await accounts.addUser("alice", password: Self.password(of: "alice"))
        try await accounts.addUser("bob", password: Self.password(of: "bob"))
        store = try await accounts.notes(of: alice).store
        let (accounts, clock) = (self.accounts, self.clock)
        server = NotesServer(
            accounts: accounts,
            limits: limits,
            maxPayloadLength: maxPayloadLength,
            now: { clock.withLock { $0 } }
        )
        listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, maxPendingConnections: 2_048)
        let (server, listener) = (self.server, self.listener)
        serving = Task { try await server.serve(listener) }
    }

    var port: Int { listener.localPort }

    static func password(of user: String) -> String { "\(user)'s password, long enough" }

    /// A client logged in as `user` (alice unless said) with their password.
    func client(as user: String = "alice") async throws -> RemoteNoteStore {
        try await RemoteNoteStore.connect(
            host: "127.0.0.1",
            port: port,
            credentials: .password(user: user, Self.password(of: user))
        )
    }

    /// A client logging in with `credentials`.
    func client(_ credentials: NotesCredentials) async throws -> RemoteNoteStore {
        try await RemoteNoteStore.connect(host: "127.0.0.1", port: port, credentials: credentials)
    }

    /// Moves the throttle's clock on.
    func advance(_ duration: Duration) {
        clock.withLock { $0 += duration }
    }

    /// A plain connection, for writing bytes no client would.
    func raw() async throws -> TCPConnection {
        try await TCPConnection.connect(host: "127.0.0.1", port: port)
    }

    /// A plain connection logged in as `user`, its `authenticated` reply read.
    func rawLoggedIn(as user: String = "alice") async throws -> TCPConnection {
        let connection = try await raw()
        let codec = STXFrameCodec()
        let payload = try NotesWireFormat.encode(
            .authenticate(.password(user: user, Self.password(of: user))),
            requestID: 1
        )
        try await connection.write(STXFrame(destination: 1, source: 9, payload: payload), using: codec)
        var frames = connection.frames(codec).makeAsyncIterator()
        guard let frame = try await frames.next(),
            try NotesWireFormat.decode(frame.payload).message == .authenticated
        else { throw NotesError(code: .authenticationFailed, message: "the fixture's login failed") }
        return connection
    }

    func stop() async {
        try? await listener.close()
        serving.cancel()
        _ = await serving.result
        try? FileManager.default.removeItem(at: folder)
    }
}
