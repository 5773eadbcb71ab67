import Foundation
import PostgresNIO
import Testing
import TetherPostgres
import TetherStore
import TetherTestSupport

/// TLS to the database, against the test server's self-signed certificate: `sslmode` and `sslrootcert` as libpq
/// reads them, checked by asking the server whether the connection is encrypted.
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct PostgresTLSTests {
    /// The database's URL with `parameters` in place of `sslmode=disable`.
    static func url(_ parameters: String) async throws -> String {
        try await freshDatabase().replacingOccurrences(of: "sslmode=disable", with: parameters)
    }

    /// Whether the pool's connections are encrypted, as the server sees them.
    static func isEncrypted(_ store: PostgresStore<Note>) async throws -> Bool {
        let rows = try await store.pool.client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        for try await encrypted in rows.decode(Bool.self) { return encrypted }
        return false
    }

    @Test func verifyFullWithTheServersCertificateAsRootIsEncryptedAndWorks() async throws {
        let server = try await PostgresTestServer.shared
        let store = try await PostgresStore<Note>(
            url: try await Self.url("sslmode=verify-full&sslrootcert=\(server.certificatePath)")
        )
        #expect(try await Self.isEncrypted(store))
        let note = Note(content: "over TLS")
        try await store.insert(note)
        #expect(try await store.fetchAll() == [note])
        // The change feed's own connection verifies the same way.
        var changes = try await store.changes().makeAsyncIterator()
        try await store.delete(id: note.id)
        #expect(try await changes.next() == .deleted(note.id))
        await store.pool.close()
    }

    @Test func requireEncryptsWithoutCheckingAndDisableDoesNot() async throws {
        let required = try await PostgresStore<Note>(url: try await Self.url("sslmode=require"))
        #expect(try await Self.isEncrypted(required))
        await required.pool.close()
        let plain = try await PostgresStore<Note>(url: try await Self.url("sslmode=disable"))
        #expect(try await Self.isEncrypted(plain) == false)
        await plain.pool.close()
    }

    @Test func verifyFullAgainstTheSystemsRootsRefusesASelfSignedServerWithIO() async throws {
        let url = try await Self.url("sslmode=verify-full")
        let error = await expectStoreError(.io) { try await PostgresStore<Note>(url: url) }
        #expect(error?.message.contains("127.0.0.1") == true, "\(String(describing: error))")
    }
}
