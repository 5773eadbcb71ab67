import Foundation
import GRDB
import Testing
import TetherTestSupport

@testable import TetherStore

struct SQLiteStoreTests {
    @Test func theDatabaseUsesWALWithFullSynchronousCommits() async throws {
        try await withTemporaryDirectory { directory in
            let store = try SQLiteStore<Note>(url: directory.appendingPathComponent("n.sqlite"))
            let (mode, synchronous) = try await store.database.writeWithoutTransaction { db in
                (
                    try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                    try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
                )
            }
            #expect(mode == "wal")
            #expect(synchronous == 2)
        }
    }

    @Test func rowsHoldTheJSONIdAndRecordInTheDocumentedTable() async throws {
        let store = try SQLiteStore<Item>.inMemory()
        try await store.insert(Item(id: "a", title: "A", score: 1.5))
        try await store.insert(Item(id: "b", title: "B"))
        try await store.upsert(Item(id: "a", title: "A2"))
        let rows = try store.database.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, id, record FROM \"Item\" ORDER BY rowid")
        }
        #expect(rows.map { $0["id"] as String } == ["\"a\"", "\"b\""])
        #expect(rows.map { $0["rowid"] as Int64 } == [1, 2])
        let record = try JSONDecoder().decode(Item.self, from: rows[0]["record"] as Data)
        #expect(record.title == "A2")
    }

    @Test func twoStoresOnOneDatabaseShareItUnderTheirOwnTables() async throws {
        let queue = try DatabaseQueue()
        let notes = try SQLiteStore<Note>(database: queue, tableName: "notes")
        let items = try SQLiteStore<Item>(database: queue, tableName: "items")
        try await notes.insert(Note(content: "n"))
        try await items.insert(Item(id: "i", title: "t"))
        #expect(try await notes.count() == 1)
        #expect(try await items.count() == 1)
        let other = try SQLiteStore<Note>(database: queue, tableName: "notes")
        #expect(try await other.fetchAll().map(\.content) == ["n"])
    }

    @Test func twoProcessesWorthOfStoresOnOneFileBothSeeEveryWrite() async throws {
        try await withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("shared.sqlite")
            let first = try SQLiteStore<Note>(url: url)
            let second = try SQLiteStore<Note>(url: url)
            let a = Note(content: "a")
            let b = Note(content: "b")
            try await first.insert(a)
            try await second.insert(b)
            #expect(try await first.fetchAll() == [a, b])
            await expectStoreError(.duplicateID) { try await second.insert(a) }
        }
    }

    @Test func aFileThatIsNotADatabaseIsCorruptDataAndKept() async throws {
        try await withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("bad.sqlite")
            let bytes = Data(repeating: 0x42, count: 8192)
            try bytes.write(to: url)
            await expectStoreError(.corruptData) { try SQLiteStore<Note>(url: url) }
            #expect(try sameElements(contents(of: url), bytes))
        }
    }

    @Test func aRowThatDoesNotDecodeIsCorruptData() async throws {
        let store = try SQLiteStore<Note>.inMemory()
        try await store.database.write { db in
            try db.execute(sql: "INSERT INTO \"Note\" (id, record) VALUES ('\"x\"', x'7b7d')")
        }
        await expectStoreError(.corruptData) { try await store.fetchAll() }
    }

    @Test func theSeedAppsOwnNoteTableIsAnIncompatibleModelAtOpenAndIsKept() async throws {
        try await withTemporaryDirectory { directory in
            // The seed's NoteDAO wrote `NotesList.sqlite3` with `Note(cdate TEXT PRIMARY KEY, content TEXT)`.
            let url = directory.appendingPathComponent(NoteDAO.fileName(for: .sqlite))
            let seed = try DatabaseQueue(path: url.path)
            try await seed.write { db in
                try db.execute(sql: "CREATE TABLE Note (cdate TEXT PRIMARY KEY, content TEXT)")
                try db.execute(sql: "INSERT INTO Note VALUES ('2010-08-01 12:00:00', 'from the seed')")
            }
            try seed.close()
            let error = await expectStoreError(.incompatibleModel) { try NoteDAO.open(.sqlite, directory: directory) }
            #expect(error?.message.contains("cdate, content") == true)
            let kept = try DatabaseQueue(path: url.path)
            let content = try await kept.read { db in try String.fetchOne(db, sql: "SELECT content FROM Note") }
            #expect(content == "from the seed")
        }
    }

    @Test func emptyTableNamesAreAnInvalidArgument() async throws {
        await expectStoreError(.invalidArgument) { try SQLiteStore<Note>(database: try DatabaseQueue(), tableName: "") }
    }

    @Test func storeErrorsMatchTheirCodesInCatchClauses() {
        let error: any Error = StoreError(code: .locked, message: "busy")
        var matched = false
        do { throw error } catch StoreError.Code.locked { matched = true } catch {}
        #expect(matched)
        #expect(StoreError.Code.validation.rawValue == 9)
        #expect("\(StoreError(code: .notFound, message: "m"))".contains("notFound"))
    }
}

extension SQLiteStoreTests {
    @Test func aNewDatabaseAndItsJournalFilesAreTheOwnersOnly() async throws {
        try await withTemporaryDirectory { directory in
            let records = directory.appendingPathComponent("notes.sqlite3")
            let store = try SQLiteStore<Note>(url: records, tableName: "Note")
            try await store.insert(Note(content: "personal"))
            let objects = directory.appendingPathComponent("objects.sqlite3")
            let container = PersistentContainer(name: "Objects", model: notesModel, storeType: .sqlite(objects))
            try container.loadPersistentStores()
            try container.viewContext.insert(entityName: "Folder", values: ["name": .string("personal")])
            try container.viewContext.save()
            for path in [
                records.path, records.path + "-wal", records.path + "-shm", objects.path, objects.path + "-wal",
            ] {
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                let mode = try #require(attributes[.posixPermissions] as? Int)
                #expect(mode & 0o077 == 0, "\(path) has mode \(String(mode, radix: 8))")
            }
        }
    }
}
