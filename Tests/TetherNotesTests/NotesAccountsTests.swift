import Foundation
import Testing
import TetherStore

@testable import TetherNotes

@Suite("NotesAccounts on SQLite: users, password verifiers, tokens, migration", .timeLimit(.minutes(1)))
struct NotesAccountsTests {
    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test(
        "PBKDF2-HMAC-SHA256 gives the published vectors (RFC 7914 section 11, and the common RFC 6070-style ones)",
        arguments: [
            (
                "passwd", "salt", 1, 64,
                "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                    + "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
            ),
            (
                "Password", "NaCl", 80_000, 64,
                "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
                    + "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"
            ),
            ("password", "salt", 1, 32, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
            ("password", "salt", 4_096, 32, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
        ]
    )
    func pbkdf2Vectors(password: String, salt: String, iterations: Int, length: Int, expected: String) {
        let key = PasswordVerifier.derive(password, salt: Data(salt.utf8), iterations: iterations, length: length)
        #expect(Self.hex(key) == expected)
    }

    @Test func aVerifierKeepsNoPasswordAndVerifiesOnlyItsOwn() throws {
        let verifier = PasswordVerifier(password: "correct horse", iterations: 1_000)
        #expect(verifier.verifies("correct horse"))
        #expect(!verifier.verifies("correct horse "))
        #expect(!verifier.verifies(""))
        #expect(verifier.salt.count == 16 && verifier.hash.count == 32 && verifier.algorithm == "pbkdf2-sha256")
        let encoded = try JSONEncoder().encode(verifier)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("correct"))
        // Two verifiers of one password differ by their salts.
        #expect(PasswordVerifier(password: "correct horse", iterations: 1_000).hash != verifier.hash)
    }

    @Test func theDefaultIterationCountIsOWASPs() {
        #expect(PasswordVerifier.defaultIterations == 600_000)
    }

    static func accounts() throws -> (NotesAccounts, URL) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherNotesAccounts-\(UUID().uuidString)", isDirectory: true)
        return (try NotesAccounts.sqlite(directory: folder, passwordIterations: 1_000), folder)
    }

    @Test func usersAreCheckedMadeOnceAndRemovedWithTheirNotesAndTokens() async throws {
        let (accounts, folder) = try Self.accounts()
        defer { try? FileManager.default.removeItem(at: folder) }
        for bad in ["", ".hidden", "-flag", "a b", "ünï", String(repeating: "a", count: 65), "a/b"] {
            let error = await #expect(throws: NotesError.self) { try await accounts.addUser(bad, password: "x") }
            #expect(error?.code == .invalidArgument, "\(bad)")
        }
        let alice = try await accounts.addUser("alice", password: "pw")
        let twice = await #expect(throws: NotesError.self) { try await accounts.addUser("alice", password: "pw") }
        #expect(twice?.code == .invalidArgument)
        let note = Note(content: "kept apart")
        try await accounts.notes(of: alice).store.insert(note)
        let token = try await accounts.issueToken(for: "alice")
        #expect(try await accounts.removeUser("alice"))
        #expect(try await accounts.authenticate(.token(user: "alice", token)) == nil)
        // Made again under the same name: a new table, without the old notes.
        let again = try await accounts.addUser("alice", password: "pw")
        #expect(again.notesTable != alice.notesTable)
        #expect(try await accounts.notes(of: again).store.fetchAll() == [])
        #expect(try await accounts.removeUser("nobody") == false)
        // The database file is private.
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: folder.appendingPathComponent(NotesAccounts.sqliteFileName).path
            )[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aTokenIsLongRandomStoredHashedAndRevocable() async throws {
        let (accounts, folder) = try Self.accounts()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await accounts.addUser("alice", password: nil)
        let token = try await accounts.issueToken(for: "alice")
        #expect(token.count == 43 && !token.contains("=") && !token.contains("+") && !token.contains("/"))
        #expect(try await accounts.authenticate(.token(user: "alice", token))?.name == "alice")
        #expect(try await accounts.authenticate(.password(user: "alice", token)) == nil)
        let later = try await accounts.issueToken(for: "alice", expiresAt: Date().addingTimeInterval(60))
        #expect(try await accounts.authenticate(.token(user: "alice", later))?.name == "alice")
        #expect(
            try await accounts.authenticate(.token(user: "alice", later), now: Date().addingTimeInterval(61)) == nil
        )
        // Neither the database nor its journal holds the token; the journal holds its digest.
        var bytes = Data()
        for suffix in ["", "-wal"] {
            let file = folder.appendingPathComponent(NotesAccounts.sqliteFileName + suffix)
            bytes += (try? Data(contentsOf: file)) ?? Data()
        }
        let database = String(decoding: bytes, as: UTF8.self)
        #expect(!database.contains(token))
        #expect(database.contains(NotesAccounts.digest(token)))
        #expect(try await accounts.revokeTokens(of: "alice") == 2)
        #expect(try await accounts.authenticate(.token(user: "alice", token)) == nil)
    }

    @Test func aSingleUserStoreMigratesToANamedUserOnce() async throws {
        let (accounts, folder) = try Self.accounts()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try NoteDAO.open(.sqlite, directory: folder)
        let notes = [Note(content: "one"), Note(content: "two")]
        for note in notes { try await old.create(note) }
        let alice = try await accounts.addUser("alice", password: "pw")
        try await accounts.addUser("bob", password: "pw")
        #expect(try await accounts.importNotes(from: old, to: "alice") == 2)
        #expect(try await accounts.importNotes(from: old, to: "alice") == 2)
        #expect(try await accounts.notes(of: alice).store.fetchAll() == notes)
        let bob = try #require(try await accounts.user(named: "bob"))
        #expect(try await accounts.notes(of: bob).store.fetchAll() == [])
        let missing = await #expect(throws: NotesError.self) { try await accounts.importNotes(from: old, to: "carol") }
        #expect(missing?.code == .notFound)
    }
}
