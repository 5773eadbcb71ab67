public import Foundation

/// The seed's notes data-access object (`create`, `remove`, `modify`, `findAll`, `findById`) over any
/// ``RecordStore`` of ``Note``s.
///
/// Δ vs the seed: the primary key is `Note.id`, not the date string `yyyy-MM-dd HH:mm:ss` (two notes in the same second
/// collided); errors are thrown instead of asserted; there is no `sharedManager` singleton (``open(_:in:)`` is the
/// factory); `modify` writes the new content (the seed wrote the old one back).
public final class NoteDAO: Sendable {
    /// The store a DAO opens with ``open(_:in:)``.
    public enum StoreKind: String, Sendable, Hashable, CaseIterable {
        /// `NotesList.plist`, an XML property list.
        case plist
        /// `NotesList.archive`, a keyed archive with root key `NotesList`.
        case archive
        /// `NotesList.sqlite3`, table `Note`.
        case sqlite
    }

    private let store: any RecordStore<Note>

    /// Creates a DAO over `store`.
    /// - Parameter store: Where the notes live.
    public init(store: any RecordStore<Note>) {
        self.store = store
    }

    /// Opens the notes store of `kind` in `directories.documents` (created if needed).
    ///
    /// A `NotesList.plist` in the seed's format (an array of `{date: "yyyy-MM-dd HH:mm:ss", content}`, dates in UTC)
    /// is first converted in place, once, keeping its order and giving each note a new id.
    /// - Parameters:
    ///   - kind: The store kind.
    ///   - directories: The app's folders.
    /// - Returns: A DAO over the opened store.
    /// - Throws: ``StoreError`` from creating the folder, converting or opening the store.
    public static func open(_ kind: StoreKind, in directories: AppDirectories) throws -> NoteDAO {
        try directories.createDirectories()
        return try open(kind, directory: directories.documents)
    }

    /// Opens the notes store of `kind` in `directory` (created if needed, mode 0700), with the same file names and
    /// the same one-time seed import as ``open(_:in:)``.
    /// - Parameters:
    ///   - kind: The store kind.
    ///   - directory: The folder holding the store file.
    /// - Returns: A DAO over the opened store.
    /// - Throws: ``StoreError`` from creating the folder, converting or opening the store.
    public static func open(_ kind: StoreKind, directory: URL) throws -> NoteDAO {
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw StoreError(code: .io, message: "cannot create directory", url: directory, underlying: error)
        }
        let url = directory.appendingPathComponent(fileName(for: kind))
        switch kind {
        case .plist:
            try LegacyNotesImporter.convertIfNeeded(url)
            return NoteDAO(store: try PropertyListStore<Note>(url: url, format: .xml))
        case .archive:
            return NoteDAO(store: try ArchiveStore<Note>(url: url, rootKey: "NotesList"))
        case .sqlite:
            return NoteDAO(store: try SQLiteStore<Note>(url: url, tableName: "Note"))
        }
    }

    /// The file name of a store kind: `NotesList.plist`, `NotesList.archive` or `NotesList.sqlite3`.
    /// - Parameter kind: The store kind.
    /// - Returns: The file name inside `documents`.
    public static func fileName(for kind: StoreKind) -> String {
        switch kind {
        case .plist: "NotesList.plist"
        case .archive: "NotesList.archive"
        case .sqlite: "NotesList.sqlite3"
        }
    }

    /// The seed's first-launch step: an empty store receives the seed's two notes, "Welcome to MyNotes."
    /// (2010-08-04 16:01:03 UTC) and "欢迎使用MyNotes." (2011-12-04 16:01:03 UTC); a non-empty store is left alone.
    public func createEditableCopyOfDatabaseIfNeeded() async throws {
        guard try await store.count() == 0 else { return }
        try await store.insert(Note(date: Date(timeIntervalSince1970: 1_280_937_663), content: "Welcome to MyNotes."))
        try await store.insert(Note(date: Date(timeIntervalSince1970: 1_323_014_463), content: "欢迎使用MyNotes."))
    }

    /// Adds a note.
    /// - Throws: ``StoreError/Code/duplicateID`` if a note with `model.id` exists.
    public func create(_ model: Note) async throws {
        try await store.insert(model)
    }

    /// Removes the note with `model.id`.
    /// - Returns: `false` if there was no such note.
    @discardableResult
    public func remove(_ model: Note) async throws -> Bool {
        try await store.delete(id: model.id)
    }

    /// Replaces the date and content of the note with `model.id`.
    /// - Throws: ``StoreError/Code/notFound`` if there is no such note.
    public func modify(_ model: Note) async throws {
        try await store.update(model)
    }

    /// All notes in store (insertion) order.
    public func findAll() async throws -> [Note] {
        try await store.fetchAll()
    }

    /// The note with `model.id`, or `nil`.
    public func findById(_ model: Note) async throws -> Note? {
        try await store.fetchOne(id: model.id)
    }
}
