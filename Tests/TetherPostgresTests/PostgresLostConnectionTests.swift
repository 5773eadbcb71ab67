import Foundation
import NIOCore
import PostgresNIO
import Testing
import TetherConcurrency
import TetherStore
import TetherTestSupport

@testable import TetherPostgres

/// A store call whose connection dies while the call runs (a restart of the database, a killed backend) is answered:
/// `StoreError.Code.io`, its transaction not committed, and the pool serves the next call on a new connection.
@Suite(needsPostgreSQL, .timeLimit(.minutes(1)))
struct PostgresLostConnectionTests {
    /// The backend is terminated after the write's statement and before its `COMMIT`, and the connection has closed
    /// by the time the `COMMIT` is sent: postgres-nio drops a query written to a closed connection without answering
    /// it, so the call waited forever.
    @Test func aWriteWhoseConnectionClosesBeforeItsCommitFailsWithIOAndCommitsNothing() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        let admin = try PostgresPool(url: url)
        let kept = Note(content: "committed before")
        try await store.insert(kept)
        let lost = Note(content: "in flight when its backend was terminated")
        let (id, blob) = try RecordRowCoding<Note>.encode(lost)
        let killed = LockedBox<[Int32]>([])
        await expectStoreError(.io) {
            try await store.pool.withTransaction("insert of a note") { connection in
                try await connection.query(
                    "INSERT INTO \"Note\" (id, record) VALUES (\(id), \(ByteBuffer(bytes: blob)))",
                    logger: PostgresPool.logger
                )
                let pid = try await backendPID(of: connection)
                killed.withLock { $0.append(pid) }
                try await admin.client.query("SELECT pg_terminate_backend(\(pid))")
                try await connection.closeFuture.get()
            }
        }
        #expect(killed.withLock { $0 }.count == 1)
        #expect(try await store.fetchAll() == [kept])
        await admin.close()
    }

    @Test func theNextWriteOnThePoolAfterALostConnectionSucceedsOnANewConnection() async throws {
        let url = try await freshDatabase()
        let store = try await PostgresStore<Note>(url: url)
        let admin = try PostgresPool(url: url)
        let killed = LockedBox<[Int32]>([])
        await expectStoreError(.io) {
            try await store.pool.withTransaction("a write") { connection in
                let pid = try await backendPID(of: connection)
                killed.withLock { $0.append(pid) }
                try await admin.client.query("SELECT pg_terminate_backend(\(pid))")
                try await connection.closeFuture.get()
            }
        }
        let next = Note(content: "after the lost connection")
        try await store.insert(next)
        #expect(try await store.fetchAll() == [next])
        let now = try await store.pool.withConnection("pid") { try await backendPID(of: $0) }
        #expect(killed.withLock { $0 }.count == 1)
        #expect(!killed.withLock { $0 }.contains(now))
        await admin.close()
    }

    // MARK: - Helpers

    private func backendPID(of connection: PostgresConnection) async throws -> Int32 {
        let rows = try await connection.query("SELECT pg_backend_pid()", logger: PostgresPool.logger)
        for try await pid in rows.decode(Int32.self) { return pid }
        throw StoreError(code: .io, message: "no backend pid")
    }
}
