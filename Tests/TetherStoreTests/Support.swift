import Foundation
import GRDB
import Testing
import TetherPostgres
import TetherTestSupport

@testable import TetherStore

/// A fresh directory under the system temporary directory, removed when the body ends.
@discardableResult
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("TetherStoreTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// Every kind of record store, so that one suite runs over all of them.
///
/// `postgres` is a ``PostgresStore`` in a database of its own (one per test directory) on the process's PostgreSQL
/// test server; it is left out, with a printed reason, only where PostgreSQL is not installed.
enum StoreKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case memory, sqlite, sqliteInMemory, plistXML, plistBinary, archive, postgres

    var description: String { rawValue }

    /// Every kind this machine can run.
    static let allCases: [StoreKind] = {
        let all: [StoreKind] = [.memory, .sqlite, .sqliteInMemory, .plistXML, .plistBinary, .archive]
        guard PostgresTestServer.isInstalled else {
            print("skipping the postgres store kind: \(PostgresTestServer.unavailableReason)")
            return all
        }
        return all + [.postgres]
    }()

    /// The kinds that survive reopening (a file, or a database).
    static let persistent: [StoreKind] =
        [.sqlite, .plistXML, .plistBinary, .archive]
        + allCases.filter { $0 == .postgres }
    /// The kinds built on the journal engine.
    static let journaled: [StoreKind] = [.plistXML, .plistBinary, .archive]

    func fileURL(in directory: URL) -> URL {
        switch self {
        case .memory, .sqliteInMemory, .postgres: directory.appendingPathComponent("unused")
        case .sqlite: directory.appendingPathComponent("store.sqlite")
        case .plistXML, .plistBinary: directory.appendingPathComponent("store.plist")
        case .archive: directory.appendingPathComponent("store.archive")
        }
    }

    /// Opens the store of this kind in `directory`.
    ///
    /// A file store is opened once the instance before it is gone (``waitUntilReleased(_:)``); pass
    /// `waitingForRelease: false` to see `.locked` at once.
    func open<R: Codable & Identifiable & Sendable>(
        _: R.Type = R.self,
        in directory: URL,
        waitingForRelease: Bool = true
    ) async throws -> any RecordStore<R>
    where R.ID: Codable & Sendable {
        if waitingForRelease, StoreKind.journaled.contains(self) {
            try await waitUntilReleased(self.fileURL(in: directory))
        }
        return try await self.openOnce(R.self, in: directory)
    }

    private func openOnce<R: Codable & Identifiable & Sendable>(
        _: R.Type,
        in directory: URL
    ) async throws
        -> any RecordStore<R>
    where R.ID: Codable & Sendable {
        let url = fileURL(in: directory)
        switch self {
        case .postgres:
            // One database per test directory, so that reopening the directory reopens the same records.
            let server = try await PostgresTestServer.shared
            let name = "t" + directory.lastPathComponent.suffix(36).lowercased().replacingOccurrences(of: "-", with: "")
            try await server.createDatabase(name)
            return try await PostgresStore<R>(url: server.url(database: name))
        case .memory: return MemoryStore<R>()
        case .sqliteInMemory: return try SQLiteStore<R>.inMemory()
        case .sqlite: return try SQLiteStore<R>(url: url)
        case .plistXML: return try PropertyListStore<R>(url: url, format: .xml)
        case .plistBinary: return try PropertyListStore<R>(url: url, format: .binary)
        case .archive: return try ArchiveStore<R>(url: url)
        }
    }

    /// Bulk-loads `records` (one transaction or one file write).
    func bulkInsert<R: Codable & Identifiable & Sendable>(_ records: [R], into store: any RecordStore<R>) async throws
    where R.ID: Codable & Sendable {
        switch store {
        case let store as SQLiteStore<R>: try await store.insert(contentsOf: records)
        case let store as PostgresStore<R>: try await store.insert(contentsOf: records)
        case let store as PropertyListStore<R>: try await store.insert(contentsOf: records)
        case let store as ArchiveStore<R>: try await store.insert(contentsOf: records)
        default:
            for record in records { try await store.insert(record) }
        }
    }
}

/// The store types of a container; `postgres` is a database of its own (one per test directory) on the process's
/// PostgreSQL test server, left out with a printed reason only where PostgreSQL is not installed.
enum ContainerKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqlite, binary, inMemory, postgres

    var description: String { rawValue }

    /// Every kind this machine can run.
    static let allCases: [ContainerKind] =
        [.sqlite, .binary, .inMemory] + (PostgresTestServer.isInstalled ? [.postgres] : [])
    /// The kinds that survive reopening.
    static let persistent: [ContainerKind] = allCases.filter { $0 != .inMemory }

    func storeType(in directory: URL) -> PersistentContainer.StoreType {
        switch self {
        case .sqlite: .sqlite(directory.appendingPathComponent("Model.sqlite"))
        case .binary: .binary(directory.appendingPathComponent("Model.binary"))
        case .inMemory: .inMemory
        case .postgres: .external("postgres")
        }
    }

    /// A container of this kind in `directory` (not loaded yet); reopening the directory reopens the same store.
    func container(name: String, model: ObjectModel, in directory: URL) async throws -> PersistentContainer {
        guard self == .postgres else {
            return PersistentContainer(name: name, model: model, storeType: storeType(in: directory))
        }
        let server = try await PostgresTestServer.shared
        let database = "o" + directory.lastPathComponent.suffix(36).lowercased().replacingOccurrences(of: "-", with: "")
        try await server.createDatabase(database)
        return PersistentContainer(
            name: name,
            model: model,
            postgres: try PostgresConfiguration(url: server.url(database: database))
        )
    }
}

/// A record with a string id and a plain `Date`, for stores in general.
struct Item: Codable, Identifiable, Sendable, Hashable {
    var id: String
    var title: String
    var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    var score: Double = 0
}

/// The bytes of a file.
func contents(of url: URL) throws -> Data {
    try Data(contentsOf: url)
}

/// Waits (up to 5 s) until no instance in this process holds the file store at `url`, and so until its deinit ran.
///
/// A file store frees its lock, after its final compaction, when the actor is deallocated. The last reference to
/// it may be dropped on the actor's own thread a moment after the caller's last `await` on it returned: a test that
/// drops a store and then opens, reads or changes its files must wait for that first.
func waitUntilReleased(_ url: URL) async throws {
    let lockURL = URL(fileURLWithPath: url.standardizedFileURL.path + ".lock")
    let deadline = ContinuousClock.now + .seconds(5)
    while true {
        do {
            _ = try FileLock(url: lockURL)
            return
        } catch let error as StoreError where error.code == .locked {
            guard ContinuousClock.now < deadline else { throw error }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
