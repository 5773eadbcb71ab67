import Foundation
import PostgresNIO
import Testing
import TetherPostgres
import TetherStore
import TetherTestSupport

/// The object context and the seed's `NoteDAO` on PostgreSQL, unchanged. (The object-context suite itself runs over
/// a postgres container in TetherStoreTests' `ObjectContextTests`, kind `postgres`.)
@Suite(needsPostgreSQL, .timeLimit(.minutes(2)))
struct PostgresObjectContextTests {
    static let model = ObjectModel(entities: [
        EntityDescription(
            name: "Note",
            attributes: [
                AttributeDescription(name: "content", type: .string),
                AttributeDescription(name: "rank", type: .integer, defaultValue: .integer(0)),
            ]
        )
    ])

    @Test func noteDAOWorksOnAPostgresStore() async throws {
        let dao = NoteDAO(store: try await PostgresStore<Note>(url: try await freshDatabase(), tableName: "Note"))
        try await dao.createEditableCopyOfDatabaseIfNeeded()
        try await dao.createEditableCopyOfDatabaseIfNeeded()
        #expect(try await dao.findAll().map(\.content) == ["Welcome to MyNotes.", "欢迎使用MyNotes."])
        var note = Note(content: "Buy milk")
        try await dao.create(note)
        await expectStoreError(.duplicateID) { try await dao.create(note) }
        note.content = "Buy oat milk"
        try await dao.modify(note)
        #expect(try await dao.findById(note)?.content == "Buy oat milk")
        await expectStoreError(.notFound) { try await dao.modify(Note(content: "ghost")) }
        #expect(try await dao.remove(note))
        #expect(try await !dao.remove(note))
        #expect(try await dao.findAll().count == 2)
    }

    @Test func twoContainersOnOneDatabaseRaceAndTheLoserGetsConflict() async throws {
        let url = try await freshDatabase()
        let first = PersistentContainer(name: "A", model: Self.model, postgres: try PostgresConfiguration(url: url))
        let second = PersistentContainer(name: "B", model: Self.model, postgres: try PostgresConfiguration(url: url))
        try first.loadPersistentStores()
        try second.loadPersistentStores()
        let id = try first.viewContext.insert(entityName: "Note", values: ["content": .string("v0")]).id
        try first.viewContext.save()
        for round in 1...10 {
            // Both contexts read the same version, then both save a change at once.
            for (index, container) in [first, second].enumerated() {
                let context = container.viewContext
                context.rollback()
                var object = try #require(try context.object(with: id))
                object["content"] = .string("round \(round) by \(index)")
                try context.update(object)
            }
            let outcomes = await withTaskGroup(of: StoreError.Code?.self) { group in
                for container in [first, second] {
                    group.addTask {
                        do {
                            try container.viewContext.save()
                            return nil
                        } catch let error as StoreError {
                            return error.code
                        } catch {
                            return .io
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == nil }.count == 1)
            #expect(outcomes.compactMap { $0 } == [.conflict])
        }
        let third = PersistentContainer(name: "C", model: Self.model, postgres: try PostgresConfiguration(url: url))
        try third.loadPersistentStores()
        let saved = try #require(try third.viewContext.object(with: id))
        #expect(String(describing: saved["content"]).contains("round 10"))
    }

    @Test func theStoredModelMigratesAndAnIncompatibleOneLeavesTheDatabaseAlone() async throws {
        let configuration = try PostgresConfiguration(url: try await freshDatabase())
        let container = PersistentContainer(name: "N", model: Self.model, postgres: configuration)
        try container.loadPersistentStores()
        try container.viewContext.insert(entityName: "Note", values: ["content": .string("old")])
        try container.viewContext.save()

        var incompatible = Self.model
        incompatible.entities[0].attributes[0].type = .binary
        await expectStoreError(.incompatibleModel) {
            try PersistentContainer(name: "N", model: incompatible, postgres: configuration).loadPersistentStores()
        }
        var extended = Self.model
        extended.entities[0].attributes.append(
            AttributeDescription(name: "pinned", type: .boolean, defaultValue: .boolean(true))
        )
        let reopened = PersistentContainer(name: "N", model: extended, postgres: configuration)
        try reopened.loadPersistentStores()
        let objects = try reopened.viewContext.fetch(FetchRequest(entityName: "Note"))
        #expect(objects.map { $0["content"] } == [.string("old")])
        #expect(objects.first?["pinned"] == .boolean(true))
        #expect(
            reopened.storeType
                == .external("postgres://tether@127.0.0.1:\(configuration.port)/\(configuration.database)")
        )
    }

    @Test func theTablesLayoutIsVersionedAndALaterOneIsRefusedAndKept() async throws {
        let url = try await freshDatabase()
        let configuration = try PostgresConfiguration(url: url)
        let container = PersistentContainer(name: "N", model: Self.model, postgres: configuration)
        try container.loadPersistentStores()
        try container.viewContext.insert(entityName: "Note", values: ["content": .string("kept")])
        try container.viewContext.save()
        let pool = try PostgresPool(url: url)
        let layout = try await pool.client.query("SELECT value FROM tether_metadata WHERE key = 'layout'")
        for try await value in layout.decode(String.self) { #expect(value == "1") }
        try await pool.client.query("UPDATE tether_metadata SET value = '2'::bytea WHERE key = 'layout'")
        let error = await expectStoreError(.incompatibleModel) {
            try PersistentContainer(name: "N", model: Self.model, postgres: configuration).loadPersistentStores()
        }
        #expect(error?.message.contains("layout version 2") == true)
        let count = try await pool.client.query("SELECT count(*) FROM tether_object")
        for try await rows in count.decode(Int64.self) { #expect(rows == 1) }
        await pool.close()
    }

    @Test func aContainerOnAServerThatIsNotThereFailsToLoadWithIO() throws {
        let port = try PostgresTestServer.freePort()
        let configuration = try PostgresConfiguration(url: "postgres://tether@127.0.0.1:\(port)/x?sslmode=disable")
        let container = PersistentContainer(name: "N", model: Self.model, postgres: configuration)
        #expect {
            try container.loadPersistentStores()
        } throws: { error in
            (error as? StoreError)?.code == .io
        }
    }
}
