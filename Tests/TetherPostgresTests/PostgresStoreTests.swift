import Foundation
import PostgresNIO
import Testing
import TetherStore
import TetherTestSupport

@testable import TetherPostgres

/// What only PostgreSQL has: many clients writing at once, the version column, the schema's versions, the URL forms
/// and a server that is down. (The record-store contract runs over `PostgresStore` in TetherStoreTests'
/// `RecordStoreTests`, kind `postgres`.)
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct PostgresStoreTests {
    @Test func tcpAndTheUnixSocketReachTheSameTable() async throws {
        let server = try await PostgresTestServer.shared
        let url = try await freshDatabase()
        let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let overTCP = try await PostgresStore<Note>(url: url)
        let overSocket = try await PostgresStore<Note>(url: server.socketURL(database: name))
        #expect(overSocket.pool.configuration.unixSocketPath?.hasSuffix(".s.PGSQL.\(server.port)") == true)
        let note = Note(content: "both ways")
        try await overTCP.insert(note)
        #expect(try await overSocket.fetchAll() == [note])
    }

    @Test func twoClientsWritingAtOnceLoseNothingAndNeverSeeLocked() async throws {
        let url = try await freshDatabase()
        let first = try await PostgresStore<Note>(url: url)
        let second = try await PostgresStore<Note>(url: url)
        let shared = Note(content: "both upsert this one")
        try await first.insert(shared)
        let mine = (0..<100).map { Note(content: "first \($0)") }
        let theirs = (0..<100).map { Note(content: "second \($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, note) in mine.enumerated() {
                group.addTask { try await first.insert(note) }
                group.addTask { try await second.insert(theirs[index]) }
                group.addTask {
                    var changed = shared
                    changed.content = "upsert \(index)"
                    try await (index.isMultiple(of: 2) ? first : second).upsert(changed)
                }
            }
            try await group.waitForAll()
        }
        #expect(Set(try await first.fetchAll()).isSuperset(of: mine + theirs))
        #expect(try await second.count() == 201)
        // An insert and 100 upserts, each raising the version.
        #expect(try #require(try await first.fetchOneWithVersion(id: shared.id)).version >= 101)
        #expect(try await first.fetchAll().first?.id == shared.id)
    }

    @Test func ofTwoWritersThatReadTheSameVersionOneWinsAndTheOtherGetsConflict() async throws {
        let url = try await freshDatabase()
        let first = try await PostgresStore<Note>(url: url)
        let second = try await PostgresStore<Note>(url: url)
        let note = Note(content: "v1")
        try await first.insert(note)
        let (read, firstVersion) = try #require(try await first.fetchOneWithVersion(id: note.id))
        var latest = firstVersion
        // Many rounds of a real race: both read the same version, then both write at once.
        for round in 0..<20 {
            let current = try #require(try await first.fetchOneWithVersion(id: note.id)).version
            let outcomes = await withTaskGroup(of: Result<Int64, any Error>.self) { group in
                for (index, store) in [first, second].enumerated() {
                    group.addTask {
                        var changed = read
                        changed.content = "round \(round) by \(index)"
                        do { return .success(try await store.update(changed, expectedVersion: current)) } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let won = outcomes.compactMap { try? $0.get() }
            let lost = outcomes.compactMap { outcome -> StoreError? in
                if case .failure(let error) = outcome { return error as? StoreError }
                return nil
            }
            #expect(won.count == 1 && won[0] > current)
            #expect(lost.map(\.code) == [.conflict])
            latest = won.first ?? latest
        }
        #expect(try await second.fetchOneWithVersion(id: note.id)?.version == latest)
        await expectStoreError(.conflict) { try await second.update(read, expectedVersion: firstVersion) }
        try await first.delete(id: note.id)
        await expectStoreError(.notFound) { try await second.update(read, expectedVersion: latest) }
    }

    @Test func everyWriteRaisesTheVersionAndAReinsertNeverRepeatsOne() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        var note = Note(content: "a")
        var versions: [Int64] = []
        try await store.insert(note)
        versions.append(try #require(try await store.fetchOneWithVersion(id: note.id)).version)
        note.content = "b"
        try await store.update(note)
        versions.append(try #require(try await store.fetchOneWithVersion(id: note.id)).version)
        try await store.upsert(note)
        versions.append(try #require(try await store.fetchOneWithVersion(id: note.id)).version)
        try await store.delete(id: note.id)
        try await store.upsert(note)
        versions.append(try #require(try await store.fetchOneWithVersion(id: note.id)).version)
        #expect(versions == versions.sorted() && Set(versions).count == versions.count)
    }

    @Test func anUpdateExpectingAVersionOfADeletedLifeOfTheRecordIsAConflict() async throws {
        let url = try await freshDatabase()
        let reader = try await PostgresStore<Note>(url: url)
        let other = try await PostgresStore<Note>(url: url)
        let note = Note(content: "first life")
        try await reader.insert(note)
        let (read, version) = try #require(try await reader.fetchOneWithVersion(id: note.id))
        // Another writer deletes the record and inserts it again, as many times as the reader's version counted.
        for _ in 0..<3 {
            try await other.delete(id: note.id)
            try await other.insert(Note(id: note.id, content: "second life"))
        }
        var changed = read
        changed.content = "written over the second life"
        await expectStoreError(.conflict) { try await reader.update(changed, expectedVersion: version) }
        #expect(try await other.fetchOne(id: note.id)?.content == "second life")
    }

    @Test func theSchemaIsCreatedOnFirstOpenAtTheCurrentVersion() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase(), tableName: "notes")
        #expect(try await schemaVersion(of: "notes", in: store.pool) == PostgresSchema.currentVersion)
        #expect(try await columns(of: "notes", in: store.pool) == ["seq", "id", "record", "version"])
        // Reopening changes nothing.
        _ = try await PostgresStore<Note>(pool: store.pool, tableName: "notes")
        #expect(try await schemaVersion(of: "notes", in: store.pool) == PostgresSchema.currentVersion)
    }

    @Test func aVersion1TableIsMigratedToTheCurrentVersionKeepingItsRecordsAndTheirOrder() async throws {
        let pool = try PostgresPool(url: try await freshDatabase())
        // The table as the first schema version made it, filled through that schema's columns.
        _ = try await pool.withDedicatedConnection("v1") { connection in
            try await PostgresSchema.prepare(table: "Note", upTo: 1, on: connection)
        }
        #expect(try await columns(of: "Note", in: pool) == ["seq", "id", "record"])
        let notes = (0..<5).map { Note(date: Date(timeIntervalSinceReferenceDate: Double($0)), content: "old \($0)") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for note in notes {
            let id = String(decoding: try encoder.encode(note.id), as: UTF8.self)
            let record = ByteBuffer(bytes: try encoder.encode(note))
            try await pool.client.query("INSERT INTO \"Note\" (id, record) VALUES (\(id), \(record))")
        }
        #expect(try await schemaVersion(of: "Note", in: pool) == 1)

        let store = try await PostgresStore<Note>(pool: pool)
        #expect(try await schemaVersion(of: "Note", in: pool) == PostgresSchema.currentVersion)
        #expect(try await columns(of: "Note", in: pool) == ["seq", "id", "record", "version"])
        #expect(try await store.fetchAll() == notes)
        #expect(try await store.fetchOneWithVersion(id: notes[2].id)?.version == 1)
        var changed = notes[2]
        changed.content = "changed after the migration"
        #expect(try await store.update(changed, expectedVersion: 1) > 1)
        let extra = Note(content: "new")
        try await store.insert(extra)
        #expect(try await store.fetchAll() == [notes[0], notes[1], changed, notes[3], notes[4], extra])
    }

    @Test func dropDeletesTheTableAndItsSchemaEntryAndReopeningStartsEmpty() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase(), tableName: "dropped")
        try await store.insert(Note(content: "gone with the table"))
        try await store.drop()
        #expect(try await schemaVersion(of: "dropped", in: store.pool) == nil)
        await expectStoreError(.io) { try await store.count() }
        let reopened = try await PostgresStore<Note>(pool: store.pool, tableName: "dropped")
        #expect(try await reopened.count() == 0)
        #expect(try await schemaVersion(of: "dropped", in: store.pool) == PostgresSchema.currentVersion)
    }

    @Test func aSchemaFromANewerReleaseIsAnIncompatibleModelAndIsKept() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        try await store.insert(Note(content: "kept"))
        try await store.pool.client.query("UPDATE tether_schema SET version = 99 WHERE table_name = 'Note'")
        let error = await expectStoreError(.incompatibleModel) { try await PostgresStore<Note>(pool: store.pool) }
        #expect(error?.message.contains("version 99") == true)
        #expect(try await store.count() == 1)
    }

    @Test func aTableMadeBySomeoneElseIsAnIncompatibleModelAndIsKept() async throws {
        let pool = try PostgresPool(url: try await freshDatabase())
        try await pool.client.query("CREATE TABLE \"Note\" (cdate TEXT PRIMARY KEY, content TEXT)")
        try await pool.client.query("INSERT INTO \"Note\" VALUES ('2010-08-01 12:00:00', 'from the seed')")
        let error = await expectStoreError(.incompatibleModel) { try await PostgresStore<Note>(pool: pool) }
        #expect(error?.message.contains("cdate, content") == true)
        #expect(try await columns(of: "Note", in: pool) == ["cdate", "content"])
    }

    @Test func manyFirstOpensAtOnceCreateTheSchemaOnce() async throws {
        let url = try await freshDatabase()
        let stores = try await withThrowingTaskGroup(of: PostgresStore<Note>.self) { group in
            for _ in 0..<8 { group.addTask { try await PostgresStore<Note>(url: url) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        try await stores[0].insert(Note(content: "one"))
        for store in stores { #expect(try await store.count() == 1) }
    }

    @Test func aRowThatDoesNotDecodeIsCorruptData() async throws {
        let store = try await PostgresStore<Note>(url: try await freshDatabase())
        try await store.pool.client.query("INSERT INTO \"Note\" (id, record) VALUES ('\"x\"', '\\x7b7d'::bytea)")
        await expectStoreError(.corruptData) { try await store.fetchAll() }
    }

    @Test func badTableNamesAreAnInvalidArgument() async throws {
        let pool = try PostgresPool(url: try await freshDatabase())
        await expectStoreError(.invalidArgument) { try await PostgresStore<Note>(pool: pool, tableName: "") }
        let long = String(repeating: "x", count: 64)
        await expectStoreError(.invalidArgument) { try await PostgresStore<Note>(pool: pool, tableName: long) }
        // Quotes in a name are quoted, not SQL.
        let odd = try await PostgresStore<Note>(pool: pool, tableName: "a \"table\"; DROP TABLE x")
        try await odd.insert(Note(content: "odd"))
        #expect(try await odd.count() == 1)
    }

    @Test func aMissingDatabaseIsAnIOErrorWithTheServersReason() async throws {
        let server = try await PostgresTestServer.shared
        let error = await expectStoreError(.io) {
            try await PostgresStore<Note>(url: server.url(database: "no_such_database"))
        }
        #expect(error?.message.contains("no_such_database") == true)
    }

    @Test func aServerThatIsNotThereIsAnIOErrorAtOnce() async throws {
        let port = try PostgresTestServer.freePort()
        let started = ContinuousClock.now
        let pool = try PostgresPool(
            configuration: try configuration("postgres://tether@127.0.0.1:\(port)/x?sslmode=disable")
        )
        let error = await expectStoreError(.io) { try await PostgresStore<Note>(pool: pool) }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(error?.message.contains("127.0.0.1:\(port)") == true)
    }

    @Test func aServerThatGoesDownMakesCallsFailWithIOWithinTheTimeout() async throws {
        let server = try await PostgresTestServer.start()
        try await server.createDatabase("down")
        let pool = try PostgresPool(
            configuration: try configuration(server.url(database: "down"), timeout: .seconds(2))
        )
        let store = try await PostgresStore<Note>(pool: pool)
        try await store.insert(Note(content: "before"))
        await server.stop()
        let started = ContinuousClock.now
        await expectStoreError(.io) { try await store.insert(Note(content: "after")) }
        await expectStoreError(.io) { try await store.fetchAll() }
        #expect(ContinuousClock.now - started < .seconds(10))
        await pool.close()
    }

    // MARK: - Helpers

    private func schemaVersion(of table: String, in pool: PostgresPool) async throws -> Int? {
        let rows = try await pool.client.query("SELECT version FROM tether_schema WHERE table_name = \(table)")
        for try await version in rows.decode(Int32.self) { return Int(version) }
        return nil
    }

    private func columns(of table: String, in pool: PostgresPool) async throws -> [String] {
        let rows = try await pool.client.query(
            """
            SELECT column_name::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = \(table) ORDER BY ordinal_position
            """
        )
        var names: [String] = []
        for try await name in rows.decode(String.self) { names.append(name) }
        return names
    }
}
