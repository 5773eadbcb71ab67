import Foundation
import GRDB
import Testing
import TetherConcurrency
import TetherStore
import TetherTestSupport

// The "after" code of the article "From a NoteDAO or Core Data" (TetherStore.docc/PortingFromNoteDAOOrCoreData.md).
// Each Swift block of the article that is not marked **Before** appears here line for line
// (`everyAfterBlockOfTheArticleIsCodeOfThisFile` checks it); the tests below run them against real files, among
// them files written the way the seed wrote them.

// MARK: - The property-list DAO

func seedStyleSession(directories: AppDirectories) async throws -> [Note] {
    let dao = try NoteDAO.open(.plist, in: directories)  // Δ: no singleton; the caller keeps the DAO
    try await dao.createEditableCopyOfDatabaseIfNeeded()
    var note = Note(content: "Buy milk")
    try await dao.create(note)  // one journal entry, fsynced; not a rewrite of the file
    note.content = "Buy oat milk"
    try await dao.modify(note)  // Δ: found by its id, and the new content is written
    return try await dao.findAll()
}

// MARK: - The archive DAO

final class LegacyNote: NSObject, NSCoding {
    let date: Date
    let content: String

    init?(coder: NSCoder) {
        guard let date = coder.decodeObject(forKey: "date") as? Date,
            let content = coder.decodeObject(forKey: "content") as? String
        else { return nil }
        self.date = date
        self.content = content
    }

    func encode(with coder: NSCoder) {
        coder.encode(date, forKey: "date")
        coder.encode(content, forKey: "content")
    }
}

func importSeedArchive(_ archive: URL, into dao: NoteDAO) async throws -> Int {
    let unarchiver = try NSKeyedUnarchiver(forReadingFrom: Data(contentsOf: archive))
    unarchiver.requiresSecureCoding = false  // a file the app wrote itself; never one from elsewhere
    unarchiver.setClass(LegacyNote.self, forClassName: "Note")
    let legacy = unarchiver.decodeObject(forKey: "NotesList") as? [LegacyNote] ?? []
    for old in legacy {
        try await dao.create(Note(date: old.date, content: old.content))
    }
    return legacy.count
}

// MARK: - The SQLite DAO

func importSeedDatabase(_ seedFile: URL, into dao: NoteDAO, timeZone: TimeZone) async throws -> Int {
    let rows = try DatabaseQueue(path: seedFile.path).read { db in
        try Row.fetchAll(db, sql: "SELECT cdate, content FROM Note ORDER BY rowid")
    }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone  // the seed wrote the device's local time
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    for row in rows {
        let cdate: String = row["cdate"]
        let content: String = row["content"]
        try await dao.create(Note(date: formatter.date(from: cdate) ?? Date(), content: content))
    }
    return rows.count
}

// MARK: - Core Data: the stack, inserts and fetches

let coreDataNotesModel = ObjectModel(entities: [
    EntityDescription(
        name: "Note",
        attributes: [
            AttributeDescription(name: "content", type: .string),
            AttributeDescription(name: "date", type: .date),
            AttributeDescription(name: "tag", type: .string, isOptional: true),
        ]
    )
])

func findMilk(storeURL: URL) throws -> [String] {
    let container = PersistentContainer(name: "Notes", model: coreDataNotesModel, storeType: .sqlite(storeURL))
    try container.loadPersistentStores()  // Δ: throws instead of calling back
    let context = container.viewContext
    try context.insert(entityName: "Note", values: ["content": .string("Buy milk"), "date": .date(Date())])
    try context.save()

    let request = FetchRequest(
        entityName: "Note",
        predicate: .contains("content", "milk", caseInsensitive: true),
        sortDescriptors: [ObjectSortDescriptor(key: "date", ascending: false)]
    )
    return try context.fetch(request).compactMap { object in
        guard case .string(let content)? = object["content"] else { return nil }
        return content
    }
}

// MARK: - Core Data: changing objects, several contexts

func renameInBackground(_ id: ObjectID, to content: String, in container: PersistentContainer) throws -> Bool {
    let background = container.newBackgroundContext()  // Δ: no perform; calls are serialised by the context
    guard var note = try background.object(with: id) else { return false }
    note["content"] = .string(content)
    try background.update(note)  // Δ: a snapshot changes nothing until it is given back
    do {
        try background.save()
        return true
    } catch StoreError.Code.conflict {
        background.rollback()  // another context saved this note after we read it
        return false
    }
}

func observeSaves(
    of context: ObjectContext,
    onSave: @escaping @Sendable (Set<ObjectID>) -> Void
) -> any NSObjectProtocol {
    NotificationCenter.default.addObserver(forName: .objectContextDidSave, object: context, queue: nil) {
        notification in
        let updated = notification.userInfo?[ObjectContextNotificationKey.updated] as? Set<ObjectID> ?? []
        onSave(updated)
    }
}

// MARK: - Test support

private let seedDates = [Date(timeIntervalSince1970: 1_280_937_663), Date(timeIntervalSince1970: 1_323_014_463)]

// MARK: - Tests

@Suite("The article \"From a NoteDAO or Core Data\": its after examples compile and run", .timeLimit(.minutes(1)))
struct StorePortingGuideExamples {
    @Test("every after block of the article is code of this file, line for line")
    func everyAfterBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherStore/TetherStore.docc/PortingFromNoteDAOOrCoreData.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 5)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherStoreTests/PortingGuideExamples.swift"]
        )
        #expect(missing.isEmpty, "not in PortingGuideExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("a seed session keeps the edit; a NotesList.plist in the seed's format is converted first")
    func propertyListSession() async throws {
        try await withTemporaryDirectory { root in
            let fresh = try AppDirectories(appName: "MyNotes", environment: [:], homeDirectory: root)
            let notes = try await seedStyleSession(directories: fresh)
            #expect(notes.map(\.content) == ["Welcome to MyNotes.", "欢迎使用MyNotes.", "Buy oat milk"])

            let seeded = try AppDirectories(appName: "SeedNotes", environment: [:], homeDirectory: root)
            try seeded.createDirectories()
            let seedList: [[String: String]] = [["date": "2010-08-04 16:01:03", "content": "Seed note"]]
            let data = try PropertyListSerialization.data(fromPropertyList: seedList, format: .xml, options: 0)
            try data.write(to: seeded.documents.appendingPathComponent("NotesList.plist"))
            let converted = try await seedStyleSession(directories: seeded)
            #expect(converted.map(\.content) == ["Seed note", "Buy oat milk"])
            #expect(converted.first?.date == seedDates[0])
        }
    }

    @Test("an archive of the seed's Note class is imported with its dates, in order")
    func seedArchiveImport() async throws {
        try await withTemporaryDirectory { root in
            let archive = root.appendingPathComponent("NotesList-seed.archive")
            let archiver = NSKeyedArchiver(requiringSecureCoding: false)
            archiver.outputFormat = .xml
            let seedNotes = [
                SeedNote(date: seedDates[0], content: "Welcome to MyNotes."),
                SeedNote(date: seedDates[1], content: "欢迎使用MyNotes."),
            ]
            archiver.encode(NSArray(array: seedNotes), forKey: "NotesList")
            archiver.finishEncoding()
            // The seed's class (`SeedNote`, NoteDAOTests.swift) is named "Note" in its archives. Linux's archiver
            // ignores setClassName(_:for:) and writes the Swift name, so the name is put in by hand.
            let xml = String(decoding: archiver.encodedData, as: UTF8.self)
            let swiftName = "<string>TetherStoreTests.SeedNote</string>"
            let renamed = xml.replacingOccurrences(of: swiftName, with: "<string>Note</string>")
            #expect(renamed != xml)
            try Data(renamed.utf8).write(to: archive)

            let dao = try NoteDAO.open(.archive, directory: root.appendingPathComponent("Documents"))
            #expect(try await importSeedArchive(archive, into: dao) == 2)
            let notes = try await dao.findAll()
            #expect(notes.map(\.content) == ["Welcome to MyNotes.", "欢迎使用MyNotes."])
            #expect(notes.map(\.date) == seedDates)
        }
    }

    @Test("the seed's SQLite rows are imported with their dates read in the given time zone")
    func seedDatabaseImport() async throws {
        try await withTemporaryDirectory { root in
            let seedFile = root.appendingPathComponent("NotesList-seed.sqlite3")
            let seed = try DatabaseQueue(path: seedFile.path)
            try await seed.write { db in
                try db.execute(sql: "create table if not exists Note (cdate text primary key, content text)")
                try db.execute(sql: "insert into Note values ('2010-08-04 16:01:03', 'Welcome to MyNotes.')")
                try db.execute(sql: "insert into Note values ('2011-12-04 16:01:03', '欢迎使用MyNotes.')")
            }
            try seed.close()
            let dao = try NoteDAO.open(.sqlite, directory: root.appendingPathComponent("Documents"))
            let utc = try #require(TimeZone(identifier: "UTC"))
            #expect(try await importSeedDatabase(seedFile, into: dao, timeZone: utc) == 2)
            let notes = try await dao.findAll()
            #expect(notes.map(\.content) == ["Welcome to MyNotes.", "欢迎使用MyNotes."])
            #expect(notes.map(\.date) == seedDates)
        }
    }

    @Test("findMilk finds the note case-insensitively in a SQLite container")
    func coreDataStyleFetch() async throws {
        try await withTemporaryDirectory { root in
            let found = try findMilk(storeURL: root.appendingPathComponent("Notes.sqlite"))
            #expect(found == ["Buy milk"])
        }
    }

    @Test("a background rename is saved and announced; a deleted object cannot be renamed")
    func renamingInABackgroundContext() async throws {
        try await withTemporaryDirectory { root in
            let url = root.appendingPathComponent("Notes.sqlite")
            let container = PersistentContainer(name: "Notes", model: coreDataNotesModel, storeType: .sqlite(url))
            try container.loadPersistentStores()
            let view = container.viewContext
            let note = try view.insert(entityName: "Note", values: ["content": .string("a"), "date": .date(Date())])
            let gone = try view.insert(entityName: "Note", values: ["content": .string("b"), "date": .date(Date())])
            try view.save()
            view.delete(gone)
            try view.save()

            #expect(try renameInBackground(note.id, to: "renamed", in: container))
            #expect(try view.object(with: note.id)?["content"] == .string("renamed"))
            #expect(try !renameInBackground(gone.id, to: "x", in: container))

            let saves = LockedBox<[Set<ObjectID>]>([])
            let observer = observeSaves(of: view) { updated in saves.withLock { $0.append(updated) } }
            defer { NotificationCenter.default.removeObserver(observer) }
            var fresh = try #require(try view.object(with: note.id))
            fresh["tag"] = .string("home")
            try view.update(fresh)
            try view.save()
            #expect(saves.withLock { $0 } == [[note.id]])
        }
    }
}
