import Foundation
import GRDB
import Testing
import TetherTestSupport

@testable import TetherStore

/// The seed's `NSCoding` note class, to write an archive the way the seed app did.
final class SeedNote: NSObject, NSCoding {
    let date: Date
    let content: String

    init(date: Date, content: String) {
        self.date = date
        self.content = content
    }

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

struct NoteDAOTests {
    private func directories(_ root: URL) throws -> AppDirectories {
        try AppDirectories(appName: "MyNotes", environment: [:], homeDirectory: root)
    }

    @Test(arguments: NoteDAO.StoreKind.allCases)
    func anEmptyStoreReceivesTheSeedsTwoNotesOnce(kind: NoteDAO.StoreKind) async throws {
        try await withTemporaryDirectory { root in
            let dao = try NoteDAO.open(kind, in: directories(root))
            try await dao.createEditableCopyOfDatabaseIfNeeded()
            try await dao.createEditableCopyOfDatabaseIfNeeded()
            let notes = try await dao.findAll()
            #expect(notes.map(\.content) == ["Welcome to MyNotes.", "欢迎使用MyNotes."])
            #expect(notes.map(\.date.timeIntervalSince1970) == [1_280_937_663, 1_323_014_463])
        }
    }

    @Test(arguments: NoteDAO.StoreKind.allCases)
    func crudWithTheSeedsVocabulary(kind: NoteDAO.StoreKind) async throws {
        try await withTemporaryDirectory { root in
            let dao = try NoteDAO.open(kind, in: directories(root))
            var note = Note(content: "first")
            try await dao.create(note)
            #expect(try await dao.findById(note) == note)
            note.content = "edited"
            note.date = Date(timeIntervalSince1970: 1_600_000_000.5)
            try await dao.modify(note)
            #expect(try await dao.findById(note) == note)
            #expect(try await dao.remove(note))
            #expect(try await !dao.remove(note))
            #expect(try await dao.findById(note) == nil)
            #expect(try await dao.findAll().isEmpty)
        }
    }

    @Test(arguments: NoteDAO.StoreKind.allCases)
    func storesLiveInDocumentsUnderTheSeedsFileNames(kind: NoteDAO.StoreKind) async throws {
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            let dao = try NoteDAO.open(kind, in: dirs)
            try await dao.create(Note(content: "x"))
            let expected = dirs.documents.appendingPathComponent(NoteDAO.fileName(for: kind))
            #expect(FileManager.default.fileExists(atPath: expected.path))
            #expect(expected.path.hasPrefix(root.appendingPathComponent(".local/share/MyNotes/Documents").path))
        }
    }

    // MARK: - The seed's defects, each with a test its design would fail

    @Test(arguments: [NoteDAO.StoreKind.plist, .archive])
    func createModifyAndRemoveDoNotRewriteTheWholeFile(kind: NoteDAO.StoreKind) async throws {
        // Seed: every create/modify/remove re-encoded and rewrote the whole file (263 ms per operation at 10,000).
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            let url = dirs.documents.appendingPathComponent(NoteDAO.fileName(for: kind))
            let notes = (0..<3_000).map { Note(content: "note \($0) with enough text to make the file large") }
            do {
                let dao = try NoteDAO.open(kind, in: dirs)
                for note in notes.prefix(10) { try await dao.create(note) }
            }
            do {
                let store: any RecordStore<Note> =
                    kind == .plist
                    ? try PropertyListStore<Note>(url: url, format: .xml)
                    : try ArchiveStore<Note>(url: url, rootKey: "NotesList")
                try await StoreKind.plistXML.bulkInsert(Array(notes.dropFirst(10)), into: store)
            }
            let dao = try NoteDAO.open(kind, in: dirs)
            let before = try contents(of: url)
            var changed = notes[5]
            changed.content = "changed"
            try await dao.create(Note(content: "new"))
            try await dao.modify(changed)
            try await dao.remove(notes[7])
            #expect(try contents(of: url) == before, "the store file was rewritten by a single operation")
            #expect(try await dao.findById(changed)?.content == "changed")
        }
    }

    @Test(arguments: NoteDAO.StoreKind.allCases)
    func twoNotesCreatedInTheSameSecondAreBothKept(kind: NoteDAO.StoreKind) async throws {
        // Seed: the "yyyy-MM-dd HH:mm:ss" date was the primary key; the second note replaced or shadowed the first.
        try await withTemporaryDirectory { root in
            let dao = try NoteDAO.open(kind, in: directories(root))
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            let first = Note(date: now, content: "first")
            let second = Note(date: now, content: "second")
            try await dao.create(first)
            try await dao.create(second)
            #expect(try await dao.findAll() == [first, second])
            #expect(try await dao.findById(first)?.content == "first")
            try await dao.remove(first)
            #expect(try await dao.findAll() == [second])
        }
    }

    @Test(arguments: NoteDAO.StoreKind.allCases)
    func modifyWritesTheNewContentNotTheOld(kind: NoteDAO.StoreKind) async throws {
        // Seed (plist): `[dict setValue:content ...]` wrote the stored content back, dropping the edit.
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            var note = Note(content: "old")
            do {
                let dao = try NoteDAO.open(kind, in: dirs)
                try await dao.create(note)
                note.content = "new"
                try await dao.modify(note)
            }
            let reopened = try NoteDAO.open(kind, in: dirs)
            #expect(try await reopened.findById(note)?.content == "new")
        }
    }

    @Test func theSQLiteStoreIsAnSQLiteFileNamedSqlite3AndLeavesThePlistAlone() async throws {
        // Seed: NoteDAO_SQLite opened "NotesList.plist" as its database.
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            let plistDAO = try NoteDAO.open(.plist, in: dirs)
            let plistNote = Note(content: "in the plist")
            try await plistDAO.create(plistNote)
            let sqliteDAO = try NoteDAO.open(.sqlite, in: dirs)
            try await sqliteDAO.create(Note(content: "in sqlite"))
            let sqliteURL = dirs.documents.appendingPathComponent("NotesList.sqlite3")
            #expect(try contents(of: sqliteURL).prefix(15) == Data("SQLite format 3".utf8))
            #expect(try await plistDAO.findAll() == [plistNote])
            let plistBytes = try contents(of: dirs.documents.appendingPathComponent("NotesList.plist"))
            #expect(plistBytes.starts(with: Data("<?xml".utf8)))
        }
    }

    @Test(arguments: NoteDAO.StoreKind.allCases)
    func failuresAreThrownErrorsNotAssertions(kind: NoteDAO.StoreKind) async throws {
        // Seed: NSAssert on failures and always-0 int results.
        try await withTemporaryDirectory { root in
            let dao = try NoteDAO.open(kind, in: directories(root))
            let note = Note(content: "x")
            await expectStoreError(.notFound) { try await dao.modify(note) }
            try await dao.create(note)
            await expectStoreError(.duplicateID) { try await dao.create(note) }
        }
    }

    @Test(arguments: NoteDAO.StoreKind.allCases)
    func subSecondDatesSurviveEveryStoreIncludingXMLPlists(kind: NoteDAO.StoreKind) async throws {
        // Seed/Linux: an XML plist <date> keeps whole seconds, so a date key no longer matched after reloading.
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            let note = Note(date: Date(timeIntervalSince1970: 1_700_000_000.123456), content: "precise")
            do { try await NoteDAO.open(kind, in: dirs).create(note) }
            let found = try await NoteDAO.open(kind, in: dirs).findById(note)
            #expect(found?.date == note.date)
        }
    }

    @Test func anArchiveOfTheSeedsOwnNoteClassIsCorruptDataNotACrash() async throws {
        // Linux: NSKeyedUnarchiver calls fatalError on a class outside the allow-list.
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            try dirs.createDirectories()
            let url = dirs.documents.appendingPathComponent("NotesList.archive")
            let archiver = NSKeyedArchiver(requiringSecureCoding: false)
            archiver.encode(
                NSArray(array: [SeedNote(date: Date(), content: "Welcome to MyNotes.")]),
                forKey: "NotesList"
            )
            archiver.finishEncoding()
            let bytes = archiver.encodedData
            try bytes.write(to: url)
            let error = await expectStoreError(.corruptData) { try NoteDAO.open(.archive, in: dirs) }
            #expect(error?.message.contains("SeedNote") == true, "\(String(describing: error))")
            #expect(try sameElements(contents(of: url), bytes))
        }
    }

    @Test func theArchiveIsReadableByFoundationsSecureUnarchiver() async throws {
        try await withTemporaryDirectory { root in
            let url = root.appendingPathComponent("notes.archive")
            let notes = [
                Note(date: Date(timeIntervalSince1970: 1_280_937_663), content: "Welcome to MyNotes."),
                Note(date: Date(timeIntervalSince1970: 1_323_014_463.25), content: "欢迎使用MyNotes."),
            ]
            do {
                let store = try ArchiveStore<Note>(url: url, rootKey: "NotesList")
                for note in notes { try await store.insert(note) }
            }
            let unarchiver = try NSKeyedUnarchiver(forReadingFrom: contents(of: url))
            unarchiver.requiresSecureCoding = true
            let root = unarchiver.decodeObject(
                of: [NSArray.self, NSDictionary.self, NSString.self, NSNumber.self, NSDate.self, NSData.self],
                forKey: "NotesList"
            )
            let array = try #require(root as? [Any])
            #expect(array.count == 2)
            let second = try #require(array[1] as? [String: Any])
            #expect(second["content"] as? String == "欢迎使用MyNotes.")
            #expect((second["id"] as? String) == notes[1].id.uuidString)
        }
    }

    @Test func theSeedsNotesListPlistIsImportedOnceInOrderWithUTCDates() async throws {
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            try dirs.createDirectories()
            let url = dirs.documents.appendingPathComponent("NotesList.plist")
            let seed: [[String: String]] = [
                ["date": "2010-08-04 16:01:03", "content": "Welcome to MyNotes."],
                ["date": "2011-12-04 16:01:03", "content": "欢迎使用MyNotes."],
                ["date": "2011-12-04 16:01:03", "content": "same second"],
            ]
            try PropertyListSerialization.data(fromPropertyList: seed, format: .xml, options: 0).write(to: url)
            let dao = try NoteDAO.open(.plist, in: dirs)
            let imported = try await dao.findAll()
            #expect(imported.map(\.content) == ["Welcome to MyNotes.", "欢迎使用MyNotes.", "same second"])
            #expect(imported.map(\.date.timeIntervalSince1970) == [1_280_937_663, 1_323_014_463, 1_323_014_463])
            #expect(Set(imported.map(\.id)).count == 3)
            try await dao.createEditableCopyOfDatabaseIfNeeded()
            #expect(try await dao.findAll().count == 3)
        }
        try await withTemporaryDirectory { root in
            // Once: reopening keeps the ids the import gave.
            let dirs = try directories(root)
            try dirs.createDirectories()
            let url = dirs.documents.appendingPathComponent("NotesList.plist")
            try PropertyListSerialization.data(
                fromPropertyList: [["date": "2010-08-04 16:01:03", "content": "a"]],
                format: .xml,
                options: 0
            ).write(to: url)
            let first = try await NoteDAO.open(.plist, in: dirs).findAll()
            let second = try await NoteDAO.open(.plist, in: dirs).findAll()
            #expect(first == second)
            #expect(first.count == 1)
        }
    }

    @Test func aSeedFileWithAnUnreadableDateIsCorruptDataAndKept() async throws {
        try await withTemporaryDirectory { root in
            let dirs = try directories(root)
            try dirs.createDirectories()
            let url = dirs.documents.appendingPathComponent("NotesList.plist")
            let bytes = try PropertyListSerialization.data(
                fromPropertyList: [["date": "yesterday", "content": "a"]],
                format: .xml,
                options: 0
            )
            try bytes.write(to: url)
            await expectStoreError(.corruptData) { try NoteDAO.open(.plist, in: dirs) }
            #expect(try sameElements(contents(of: url), bytes))
        }
    }

    @Test func atomicWritesNeverLoseTheOriginalWhenTheRenameFails() async throws {
        // Linux Foundation's FileManager.replaceItemAt swaps its rename arguments and destroys the original.
        try await withTemporaryDirectory { root in
            let target = root.appendingPathComponent("occupied")
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            let inside = target.appendingPathComponent("keep.txt")
            try Data("original".utf8).write(to: inside)
            await expectStoreError(.io) { try FileIO.writeAtomically(Data("new".utf8), to: target) }
            #expect(try contents(of: inside) == Data("original".utf8))
            let file = root.appendingPathComponent("file.plist")
            try Data("old".utf8).write(to: file)
            try FileIO.writeAtomically(Data("new".utf8), to: file)
            #expect(try contents(of: file) == Data("new".utf8))
            let names = try FileManager.default.contentsOfDirectory(atPath: root.path)
            #expect(!names.contains { $0.hasSuffix(".tmp") })
        }
    }
}
