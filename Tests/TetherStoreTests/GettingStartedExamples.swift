import Foundation
import Testing
import TetherStore
import TetherTestSupport

// The code of the article "Getting started" (TetherStore.docc/GettingStarted.md). Each Swift block of the article
// appears here line for line (`everySwiftBlockOfTheArticleIsCodeOfThisFile` checks it); the tests below run them
// against real files in a temporary folder.

// MARK: - The app's folders

func appDirectories() throws -> AppDirectories {
    try AppDirectories(appName: "MyNotes")  // from $XDG_DATA_HOME, $XDG_CONFIG_HOME, $XDG_CACHE_HOME, $TMPDIR, ~
}

func appDirectories(home: URL) throws -> AppDirectories {
    try AppDirectories(appName: "MyNotes", environment: [:], homeDirectory: home)  // for tests: nothing global
}

// MARK: - Notes with the seed's DAO

func keepNotes(in directories: AppDirectories) async throws -> [Note] {
    let dao = try NoteDAO.open(.sqlite, in: directories)  // or .plist, .archive
    try await dao.createEditableCopyOfDatabaseIfNeeded()  // "Welcome to MyNotes.", "欢迎使用MyNotes."
    var note = Note(content: "Buy milk")  // a new UUID, dated now
    try await dao.create(note)
    note.content = "Buy oat milk"
    try await dao.modify(note)
    return try await dao.findAll()  // in the order they were created
}

// MARK: - Record stores

struct Bookmark: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var title: String
}

func openBookmarkStores(in folder: URL) throws -> [any RecordStore<Bookmark>] {
    [
        try PropertyListStore<Bookmark>(url: folder.appendingPathComponent("bookmarks.plist")),
        try ArchiveStore<Bookmark>(url: folder.appendingPathComponent("bookmarks.archive")),
        try SQLiteStore<Bookmark>(url: folder.appendingPathComponent("bookmarks.sqlite")),
        MemoryStore<Bookmark>(),
    ]
}

func organise(_ store: any RecordStore<Bookmark>) async throws -> [Bookmark] {
    try await store.insert(Bookmark(id: "news", title: "News"))
    try await store.insert(Bookmark(id: "mail", title: "Mail"))
    try await store.upsert(Bookmark(id: "news", title: "Daily news"))  // replaced in place
    try await store.delete(id: "mail")
    return try await store.fetchAll()  // [Daily news]
}

// MARK: - Errors

func addOnce(_ bookmark: Bookmark, to store: any RecordStore<Bookmark>) async throws -> Bool {
    do {
        try await store.insert(bookmark)
        return true
    } catch StoreError.Code.duplicateID {
        return false  // already there; the store is unchanged
    }
}

func openUnlessOpenElsewhere(_ url: URL) throws -> PropertyListStore<Bookmark>? {
    do {
        return try PropertyListStore<Bookmark>(url: url)
    } catch StoreError.Code.locked {
        return nil  // another store, in this process or another, has the file
    }
}

// MARK: - Objects in a context

let notesAppModel = ObjectModel(entities: [
    EntityDescription(
        name: "Note",
        attributes: [
            AttributeDescription(name: "content", type: .string),
            AttributeDescription(name: "date", type: .date),
            AttributeDescription(name: "pinned", type: .boolean, defaultValue: .boolean(false)),
        ]
    )
])

func pinnedNotes(storeURL: URL) throws -> [String] {
    let container = PersistentContainer(name: "Notes", model: notesAppModel, storeType: .sqlite(storeURL))
    try container.loadPersistentStores()
    let context = container.viewContext
    try context.insert(entityName: "Note", values: ["content": .string("Buy milk"), "date": .date(Date())])
    var call = try context.insert(entityName: "Note", values: ["content": .string("Call Ann"), "date": .date(Date())])
    call["pinned"] = .boolean(true)
    try context.update(call)  // objects are values: changes count once given back to the context
    try context.save()  // one transaction
    let request = FetchRequest(
        entityName: "Note",
        predicate: .equal("pinned", .boolean(true)),
        sortDescriptors: [ObjectSortDescriptor(key: "date", ascending: false)]
    )
    return try context.fetch(request).compactMap { note in
        guard case .string(let content)? = note["content"] else { return nil }
        return content  // ["Call Ann"]
    }
}

// MARK: - Tests

@Suite("The article \"Getting started\" of TetherStore: its code compiles and runs", .timeLimit(.minutes(1)))
struct StoreGettingStartedExamples {
    @Test("every Swift block of the article is code of this file, line for line")
    func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherStore/TetherStore.docc/GettingStarted.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 5)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherStoreTests/GettingStartedExamples.swift"]
        )
        #expect(missing.isEmpty, "not in GettingStartedExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the app's folders follow XDG under the home directory and end with the app's name")
    func appFolders() throws {
        #expect(try appDirectories().documents.path.hasSuffix("MyNotes/Documents"))
        let home = URL(fileURLWithPath: "/home/ann", isDirectory: true)
        let directories = try appDirectories(home: home)
        #expect(directories.documents.path == "/home/ann/.local/share/MyNotes/Documents")
        #expect(directories.caches.path == "/home/ann/.cache/MyNotes")
        #expect(directories.preferences.path == "/home/ann/.config/MyNotes")
    }

    @Test("keepNotes leaves the seed's two notes and the edited one in NotesList.sqlite3")
    func notesWithTheDAO() async throws {
        try await withTemporaryDirectory { root in
            let directories = try appDirectories(home: root)
            let notes = try await keepNotes(in: directories)
            #expect(notes.map(\.content) == ["Welcome to MyNotes.", "欢迎使用MyNotes.", "Buy oat milk"])
            let file = directories.documents.appendingPathComponent("NotesList.sqlite3")
            #expect(FileManager.default.fileExists(atPath: file.path))
        }
    }

    @Test("each of the four stores ends with the one replaced bookmark, and SQLite still has it when reopened")
    func theSameVerbsOnEveryStore() async throws {
        try await withTemporaryDirectory { folder in
            for store in try openBookmarkStores(in: folder) {
                #expect(try await organise(store) == [Bookmark(id: "news", title: "Daily news")], "\(store)")
            }
            let reopened = try SQLiteStore<Bookmark>(url: folder.appendingPathComponent("bookmarks.sqlite"))
            #expect(try await reopened.fetchAll() == [Bookmark(id: "news", title: "Daily news")])
        }
    }

    @Test("a duplicate id is refused by code, and a file store open elsewhere is locked")
    func errorsByCode() async throws {
        try await withTemporaryDirectory { folder in
            let store = MemoryStore<Bookmark>()
            #expect(try await addOnce(Bookmark(id: "a", title: "A"), to: store))
            #expect(try await !addOnce(Bookmark(id: "a", title: "Other"), to: store))
            #expect(await store.fetchAll() == [Bookmark(id: "a", title: "A")])

            let url = folder.appendingPathComponent("locked.plist")
            let first = try openUnlessOpenElsewhere(url)
            #expect(first != nil)
            #expect(try openUnlessOpenElsewhere(url) == nil)
            withExtendedLifetime(first) {}
        }
    }

    @Test("pinnedNotes returns the pinned note, and the saved objects are there when the store is loaded again")
    func objectsInAContext() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("Notes.sqlite")
            let first = try pinnedNotes(storeURL: url)
            let second = try pinnedNotes(storeURL: url)  // the same file, loaded again
            #expect(first == ["Call Ann"])
            #expect(second == ["Call Ann", "Call Ann"])
        }
    }
}
