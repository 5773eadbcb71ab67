import Foundation
import Testing
import TetherStore

@testable import TetherNotes

/// A login is checked again while its connection lives: a revoked or expired token, a removed user or a changed
/// password ends the connections that logged in with it, also when another process changed the accounts.
@Suite("The notes service checks a login's credentials again while its connection lives", .timeLimit(.minutes(1)))
struct NotesCredentialsCheckTests {
    static let limits = NotesServerLimits(credentialsCheckInterval: .milliseconds(50))

    /// The error that ends `changes`, once the server has ended the connection.
    func end(of changes: AsyncThrowingStream<NoteChange, any Error>) async -> NotesError? {
        do {
            for try await _ in changes {}
            return nil
        } catch {
            return error as? NotesError
        }
    }

    @Test("what a login proved holds until its token is revoked or expires, its user removed or password changed")
    func aLoginHoldsUntilItsProofChanges() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesTests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let accounts = try NotesAccounts.sqlite(directory: folder, passwordIterations: 1_000)
        try await accounts.addUser("alice", password: "first password")
        let now = Date()
        let password = try #require(try await accounts.login(.password(user: "alice", "first password"), now: now))
        let token = try await accounts.issueToken(for: "alice", expiresAt: now.addingTimeInterval(60))
        let tokenLogin = try #require(try await accounts.login(.token(user: "alice", token), now: now))
        #expect(try await accounts.isStillValid(password, now: now))
        #expect(try await accounts.isStillValid(tokenLogin, now: now))
        // Expiry goes by the time given.
        #expect(!(try await accounts.isStillValid(tokenLogin, now: now.addingTimeInterval(60))))
        // A new password ends the old one's logins, not the token's.
        try await accounts.setPassword("second password", of: "alice")
        #expect(!(try await accounts.isStillValid(password, now: now)))
        #expect(try await accounts.isStillValid(tokenLogin, now: now))
        _ = try await accounts.revokeTokens(of: "alice")
        #expect(!(try await accounts.isStillValid(tokenLogin, now: now)))
        // A user removed and made again under the same name is another user: the old login does not hold.
        let again = try #require(try await accounts.login(.password(user: "alice", "second password"), now: now))
        try await accounts.removeUser("alice")
        #expect(!(try await accounts.isStillValid(again, now: now)))
        try await accounts.addUser("alice", password: "second password")
        #expect(!(try await accounts.isStillValid(again, now: now)))
    }

    @Test("revoking a token from another accounts handle on the file ends the watcher that logged in with it")
    func aRevokedTokenEndsItsConnections() async throws {
        let service = try await NotesServiceFixture(limits: Self.limits)
        let token = try await service.accounts.issueToken(for: "alice")
        let client = try await service.client(.token(user: "alice", token))
        let changes = try await client.changes()
        #expect(try await client.list() == [])
        // As `tether notes user revoke-tokens` does: its own handle on the accounts' file.
        let other = try NotesAccounts.sqlite(directory: service.folder, passwordIterations: 1_000)
        #expect(try await other.revokeTokens(of: "alice") == 1)
        let ended = await end(of: changes)
        #expect(ended?.code == .notAuthenticated)
        let request = await #expect(throws: NotesError.self) { try await client.list() }
        #expect(request?.code == .notAuthenticated)
        await client.close()
        await service.stop()
    }

    @Test("a token that expires while its connection is open ends that connection")
    func anExpiredTokenEndsItsConnection() async throws {
        let service = try await NotesServiceFixture(limits: Self.limits)
        let token = try await service.accounts.issueToken(for: "alice", expiresAt: Date().addingTimeInterval(3))
        let client = try await service.client(.token(user: "alice", token))
        // The token may expire before the subscription is answered (a loaded machine): the connection ends either way.
        let ended: NotesError?
        do {
            ended = await end(of: try await client.changes())
        } catch {
            ended = error as? NotesError
        }
        #expect(ended?.code == .notAuthenticated)
        await client.close()
        await service.stop()
    }

    @Test("removing a user, or changing their password, ends the connections that logged in with the password")
    func aRemovedUserOrChangedPasswordEndsTheirConnections() async throws {
        let service = try await NotesServiceFixture(limits: Self.limits)
        let alice = try await service.client(as: "alice")
        let bob = try await service.client(as: "bob")
        let aliceChanges = try await alice.changes()
        let bobChanges = try await bob.changes()
        try await service.accounts.setPassword("a new password for alice", of: "alice")
        #expect(await end(of: aliceChanges)?.code == .notAuthenticated)
        try await service.accounts.removeUser("bob")
        #expect(await end(of: bobChanges)?.code == .notAuthenticated)
        await alice.close()
        await bob.close()
        await service.stop()
    }
}
