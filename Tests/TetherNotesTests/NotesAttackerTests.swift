import Foundation
import NIOCore
import Testing
import TetherConcurrency
import TetherCore
import TetherSockets
import TetherStore

@testable import TetherNotes

/// The attacker's view of a notes server with accounts on SQLite: no request answered before authentication, every
/// refused login alike, one user's notes out of another's reach, guessing slowed, limits and deadlines enforced.
@Suite("The notes service against an attacker: authentication, isolation, throttling, limits", .timeLimit(.minutes(1)))
struct NotesAttackerTests {
    let codec = STXFrameCodec()

    func send(_ message: NotesMessage, id: UInt32, on connection: TCPConnection) async throws {
        let payload = try NotesWireFormat.encode(message, requestID: id)
        try await connection.write(STXFrame(destination: 1, source: 9, payload: payload), using: codec)
    }

    /// The server's next frame, decoded, then whether the server closed after it.
    func lastReply(_ connection: TCPConnection) async throws -> (UInt32, NotesMessage, closed: Bool) {
        var frames = connection.frames(codec).makeAsyncIterator()
        let frame = try #require(try await frames.next())
        let (id, message) = try NotesWireFormat.decode(frame.payload)
        let closed = (try? await frames.next()) == nil
        return (id, message, closed)
    }

    func failure(_ message: NotesMessage) -> NotesError? {
        if case .failed(let error) = message { error } else { nil }
    }

    @Test("every request before authenticate is answered notAuthenticated and the connection closed; nothing stored")
    func noRequestIsAnsweredBeforeAuthentication() async throws {
        let service = try await NotesServiceFixture()
        let requests: [NotesMessage] = [.list, .add("planted"), .subscribe, .remove(UUID()), .edit(UUID(), "x")]
        for (index, request) in requests.enumerated() {
            let connection = try await service.raw()
            try await send(request, id: UInt32(index + 1), on: connection)
            // A second request right behind the first: it is never served either.
            try await send(.list, id: 99, on: connection)
            let (id, reply, closed) = try await lastReply(connection)
            #expect(id == UInt32(index + 1))
            #expect(failure(reply)?.code == .notAuthenticated)
            #expect(closed)
        }
        #expect(try await service.store.count() == 0)
        await service.stop()
    }

    @Test("a wrong password, an unknown user, a revoked, expired or another user's token all fail alike")
    func everyRefusedLoginLooksAlike() async throws {
        let service = try await NotesServiceFixture()
        let revoked = try await service.accounts.issueToken(for: "alice")
        _ = try await service.accounts.revokeTokens(of: "alice")
        let expired = try await service.accounts.issueToken(for: "alice", expiresAt: Date().addingTimeInterval(-1))
        let bobs = try await service.accounts.issueToken(for: "bob")
        try await service.accounts.addUser("carol", password: nil)  // tokens only: no password verifies
        let attempts: [NotesCredentials] = [
            .password(user: "alice", "not alice's password"),
            .password(user: "mallory", NotesServiceFixture.password(of: "alice")),
            .password(user: "alice", NotesServiceFixture.password(of: "bob")),
            .password(user: "carol", "anything"),
            .token(user: "alice", revoked),
            .token(user: "alice", expired),
            .token(user: "alice", bobs),
            .token(user: "alice", "made-up-token"),
        ]
        var answers: [String] = []
        for credentials in attempts {
            // An hour between attempts: the throttle never decides here; each refusal is the accounts' own.
            service.advance(.seconds(3_600))
            let connection = try await service.raw()
            try await send(.authenticate(credentials), id: 5, on: connection)
            let (id, reply, closed) = try await lastReply(connection)
            #expect(id == 5 && closed)
            let error = try #require(failure(reply))
            #expect(error.code == .authenticationFailed)
            answers.append(error.message)
            service.advance(.seconds(3_600))
            let client = await #expect(throws: NotesError.self) { try await service.client(credentials) }
            #expect(client?.code == .authenticationFailed)
        }
        #expect(Set(answers) == ["authentication failed"])
        // Bob's token is bob's: with his name, it logs in.
        service.advance(.seconds(3_600))
        let bob = try await service.client(.token(user: "bob", bobs))
        #expect(try await bob.list() == [])
        await bob.close()
        await service.stop()
    }

    @Test("bob can neither list, read, edit, remove nor watch alice's notes, by id or by guessing")
    func oneUserCannotReachAnothersNotes() async throws {
        let service = try await NotesServiceFixture()
        let alice = try await service.client(as: "alice")
        let bob = try await service.client(as: "bob")
        let aliceWatch = try await alice.changes()
        var bobWatch = try await bob.changes().makeAsyncIterator()
        let secret = try await alice.add("alice's secret")
        #expect(try await bob.list() == [])
        let edit = await #expect(throws: NotesError.self) { try await bob.edit(secret.id, text: "defaced") }
        #expect(edit?.code == .notFound)
        let remove = await #expect(throws: NotesError.self) { try await bob.remove(secret.id) }
        #expect(remove?.code == .notFound)
        for _ in 0..<50 {
            let guess = await #expect(throws: NotesError.self) { try await bob.remove(UUID()) }
            #expect(guess?.code == .notFound)
        }
        // Bob's watcher's first change is his own add: alice's add, made before it, never reached him.
        let own = try await bob.add("bob's own")
        #expect(try await bobWatch.next() == .added(own))
        var aliceSaw: [NoteChange] = []
        for try await change in aliceWatch {
            aliceSaw.append(change)
            break
        }
        #expect(aliceSaw == [.added(secret)])
        #expect(try await alice.list() == [secret])
        #expect(try await service.store.fetchAll() == [secret])
        await alice.close()
        await bob.close()
        await service.stop()
    }

    @Test("after 6 wrong passwords (5 are free) even the right one is refused until the 1 s lock has passed")
    func guessingIsSlowed() async throws {
        let service = try await NotesServiceFixture()
        let right = NotesCredentials.password(user: "alice", NotesServiceFixture.password(of: "alice"))
        for _ in 0..<5 {
            let wrong = await #expect(throws: NotesError.self) {
                try await service.client(.password(user: "alice", "guess"))
            }
            #expect(wrong?.code == .authenticationFailed)
        }
        // The 5 free failures are used: the sixth sets a lock of 1 s.
        _ = await #expect(throws: NotesError.self) { try await service.client(.password(user: "alice", "guess 6")) }
        let locked = await #expect(throws: NotesError.self) { try await service.client(right) }
        #expect(locked?.code == .authenticationFailed)
        // Bob, from the same address, is locked out too (the address is a key of its own).
        _ = await #expect(throws: NotesError.self) { try await service.client(as: "bob") }
        service.advance(.milliseconds(1_001))
        let alice = try await service.client(right)
        #expect(try await alice.list() == [])
        await alice.close()
        await service.stop()
    }

    @Test("a client that does not authenticate within the deadline is answered timedOut and closed")
    func aSlowHandshakeIsCutOff() async throws {
        let service = try await NotesServiceFixture(
            limits: NotesServerLimits(authenticationTimeout: .milliseconds(200))
        )
        let silent = try await service.raw()
        let (id, reply, closed) = try await lastReply(silent)
        #expect(id == 0 && failure(reply)?.code == .timedOut && closed)
        // A header announcing 60 000 bytes, then a trickle: the same end.
        let trickle = try await service.raw()
        try await trickle.write(ByteBuffer(bytes: [0x02, 1, 0, 9, 0, 0x60, 0xEA, 0x06]))
        let (_, trickled, trickleClosed) = try await lastReply(trickle)
        #expect(failure(trickled)?.code == .timedOut && trickleClosed)
        await service.stop()
    }

    @Test("a logged-in client that leaves a frame unfinished past the idle timeout is answered timedOut and closed")
    func anUnfinishedFrameIsCutOff() async throws {
        let service = try await NotesServiceFixture(limits: NotesServerLimits(idleTimeout: .milliseconds(300)))
        let connection = try await service.rawLoggedIn()
        try await connection.write(ByteBuffer(bytes: [0x02, 1, 0, 9, 0, 0x60, 0xEA]))
        let (id, reply, closed) = try await lastReply(connection)
        #expect(id == 0 && failure(reply)?.code == .timedOut && closed)
        await service.stop()
    }

    @Test("connections past the limit per address, and logins past the limit per user, are refused limitExceeded")
    func connectionLimitsHold() async throws {
        let service = try await NotesServiceFixture(
            limits: NotesServerLimits(connectionsPerAddress: 3, connectionsPerUser: 1)
        )
        let first = try await service.client(as: "alice")
        let second = await #expect(throws: NotesError.self) { try await service.client(as: "alice") }
        #expect(second?.code == .limitExceeded)
        let bob = try await service.client(as: "bob")
        // The refused login's connection holds its place until the server has seen it end (after its reply reached
        // the client): wait for that, so that the next two connections are the third and the fourth.
        try await service.server.connections(where: { $0 <= 2 })
        let open = try await service.raw()
        // Each connection is admitted by its own task, in no set order: the fourth connects once the third is in.
        try await service.server.connections(where: { $0 >= 3 })
        let refused = try await service.raw()
        let (_, reply, closed) = try await lastReply(refused)
        #expect(failure(reply)?.code == .limitExceeded && closed)
        // A connection that ends frees its place (once the server has seen it end).
        try await open.close()
        await bob.close()
        try await service.server.connections(where: { $0 <= 1 })
        let again = try await service.client(as: "bob")
        #expect(try await again.list() == [])
        for client in [first, again] { await client.close() }
        await service.stop()
    }

    @Test("an anonymous server refuses a listener off loopback; loopback addresses are told apart")
    func anonymousServersStayOnLoopback() throws {
        for (ip, isLoopback) in [
            ("127.0.0.1", true), ("127.1.2.3", true), ("::1", true), ("10.0.0.1", false), ("0.0.0.0", false),
            ("::", false), ("192.168.1.5", false),
        ] {
            let address = try SocketAddress(ipAddress: ip, port: 1)
            #expect(NotesServer.isLoopback(address) == isLoopback, "\(ip)")
        }
    }
}

extension NotesAttackerTests {
    @Test("a client sending lists without reading the replies stops being read; no reply waits in its outbox")
    func unreadRepliesAreBoundedInBytes() async throws {
        let service = try await NotesServiceFixture()
        for index in 0..<7 {
            try await service.store.insert(Note(content: String(repeating: "\(index)", count: 8_000)))
        }
        let connection = try await service.rawLoggedIn()
        // 1 500 lists of 56 kB each: about 84 MB of replies, far more than the sockets' buffers hold.
        let requests = 1_500
        var batch = ByteBuffer()
        for id in 1...requests {
            try codec.encode(
                STXFrame(destination: 1, source: 9, payload: try NotesWireFormat.encode(.list, requestID: UInt32(id))),
                into: &batch
            )
        }
        try await connection.write(batch)
        // Only now read: every reply arrives, whole and in order.
        var frames = connection.frames(codec).makeAsyncIterator()
        for id in 1...requests {
            let (replyID, reply) = try NotesWireFormat.decode(try #require(try await frames.next()).payload)
            guard case .notes(let notes, true) = reply, replyID == UInt32(id), notes.count == 7 else {
                Issue.record("reply \(replyID) to request \(id): \(reply)")
                break
            }
        }
        try await connection.close()
        try await service.server.connections(where: { $0 == 0 })
        // Every reply found nothing queued ahead of it and was written by the reader itself, which waited for room
        // in the connection's write window (4 MiB) instead of reading on: nothing ever waited in the outbox.
        let peak = service.server.peakOutboxBytes.withLock { $0 }
        #expect(peak == 0, "\(peak) bytes waited in the outbox")
        await service.stop()
    }
}
