import Foundation
import GRDB
import TetherStore

/// `SQLiteStore` beside raw GRDB on the same table, single-create scaling of the file stores, and peak
/// memory for 100,000 notes in each store (each measured in a child process of its own).
///
/// `part` is `store` (everything), `store-sqlite`, `store-scaling` or `store-memory`.
enum StoreBenchmarks {
    static func run(part: String?, rounds: Int, quick: Bool) async throws {
        let records = quick ? 10_000 : 100_000
        if part == nil || part == "store" || part == "store-sqlite" {
            try await sqliteSuites(records: records, singles: quick ? 1_000 : 10_000)
        }
        if part == nil || part == "store" || part == "store-scaling" {
            try await scaling(sizes: quick ? (1_000, 2_000) : (5_000, 10_000), rounds: rounds)
        }
        if part == nil || part == "store" || part == "store-memory" {
            try memory(records: records)
        }
    }

    // MARK: - Test data

    /// `count` notes with distinct ids, dates a millisecond apart and about 80 bytes of text each.
    static func notes(_ count: Int) -> [Note] {
        let base = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
        return (0..<count).map { index in
            Note(
                date: base + Double(index) / 1000,
                content: "Note \(index): a line of text of roughly the length people write in a notes app."
            )
        }
    }

    /// A fresh directory under the temporary directory.
    static func makeDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("TetherStoreBench-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func remove(_ directory: URL) {
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - SQLiteStore vs raw GRDB

    static func sqliteSuites(records: Int, singles: Int) async throws {
        let all = notes(records)
        let tether = "Tether SQLiteStore"
        let raw = "raw GRDB"
        let baselines = [tether: raw]

        try await runSuite(
            "SQLite: \(records) inserts in one transaction (new database file each round)",
            unit: "rows/s",
            amount: Double(records),
            variants: [
                Variant(name: raw) {
                    let directory = try makeDirectory()
                    defer { remove(directory) }
                    do {
                        let database = try RawGRDBNotes(url: directory.appendingPathComponent("raw.sqlite3"))
                        try await database.insert(contentsOf: all)
                    }
                },
                Variant(name: tether) {
                    let directory = try makeDirectory()
                    defer { remove(directory) }
                    do {
                        let store = try SQLiteStore<Note>(
                            url: directory.appendingPathComponent("tether.sqlite3"),
                            tableName: "Note"
                        )
                        try await store.insert(contentsOf: all)
                    }
                },
            ],
            baselines: baselines
        )

        let some = Array(all.prefix(singles))
        try await runSuite(
            "SQLite: \(singles) inserts one by one, one transaction (commit, WAL fsync) each, into an empty table",
            unit: "rows/s",
            amount: Double(singles),
            variants: [
                Variant(name: raw) {
                    let directory = try makeDirectory()
                    defer { remove(directory) }
                    do {
                        let database = try RawGRDBNotes(url: directory.appendingPathComponent("raw.sqlite3"))
                        for note in some { try await database.insert(note) }
                    }
                },
                Variant(name: tether) {
                    let directory = try makeDirectory()
                    defer { remove(directory) }
                    do {
                        let store = try SQLiteStore<Note>(
                            url: directory.appendingPathComponent("tether.sqlite3"),
                            tableName: "Note"
                        )
                        for note in some { try await store.insert(note) }
                    }
                },
            ],
            baselines: baselines
        )

        // Reads: both tables hold the same rows, loaded once before the suites.
        let directory = try makeDirectory()
        defer { remove(directory) }
        let database = try RawGRDBNotes(url: directory.appendingPathComponent("raw.sqlite3"))
        try await database.insert(contentsOf: all)
        let store = try SQLiteStore<Note>(url: directory.appendingPathComponent("tether.sqlite3"), tableName: "Note")
        try await store.insert(contentsOf: all)
        // Every id once, in a scattered order (a stride coprime with the count).
        let stride = records == 100_000 ? 7_919 : 7_907
        let lookups = (0..<records).map { all[($0 * stride) % records].id }

        try await runSuite(
            "SQLite: \(records) fetchOne(id:) lookups in a table of \(records) notes",
            unit: "lookups/s",
            amount: Double(records),
            variants: [
                Variant(name: raw) {
                    for id in lookups {
                        guard try await database.fetchOne(id: id) != nil else { throw missing(id) }
                    }
                },
                Variant(name: tether) {
                    for id in lookups {
                        guard try await store.fetchOne(id: id) != nil else { throw missing(id) }
                    }
                },
            ],
            baselines: baselines
        )

        try await runSuite(
            "SQLite: fetchAll() of \(records) notes",
            unit: "rows/s",
            amount: Double(records),
            variants: [
                Variant(name: raw) {
                    let count = try await database.fetchAll().count
                    if count != records { throw BenchmarkError(description: "fetched \(count) of \(records)") }
                },
                Variant(name: tether) {
                    let count = try await store.fetchAll().count
                    if count != records { throw BenchmarkError(description: "fetched \(count) of \(records)") }
                },
            ],
            baselines: baselines
        )
    }

    static func missing(_ id: UUID) -> BenchmarkError {
        BenchmarkError(description: "note \(id) not found")
    }

    // MARK: - Single-create scaling

    enum FileKind: String, CaseIterable {
        case plistXML = "PropertyListStore (.xml)"
        case plistBinary = "PropertyListStore (.binary)"
        case archive = "ArchiveStore"
        case sqlite = "SQLiteStore"

        /// Opens an empty store in `directory` under the file name `NoteDAO` gives it.
        func open(in directory: URL) throws -> any RecordStore<Note> {
            switch self {
            case .plistXML:
                try PropertyListStore<Note>(url: directory.appendingPathComponent("NotesList.plist"), format: .xml)
            case .plistBinary:
                try PropertyListStore<Note>(url: directory.appendingPathComponent("NotesList.plist"), format: .binary)
            case .archive:
                try ArchiveStore<Note>(url: directory.appendingPathComponent("NotesList.archive"), rootKey: "NotesList")
            case .sqlite:
                try SQLiteStore<Note>(url: directory.appendingPathComponent("NotesList.sqlite3"), tableName: "Note")
            }
        }
    }

    /// Single creates into an empty store, each returning once durable: one run of `large` creates per store and
    /// round, read at the checkpoint after `small` creates and at the end, so both sizes see the same disk. Only the
    /// creates are timed (not opening, nor the compaction a file store does when it is released). Besides wall time,
    /// the process's CPU time (user + system, every thread) and the bytes it handed to `write` (`wchar`) are read at
    /// both points: they do not depend on how long the disk takes to acknowledge an fsync.
    static func scaling(sizes: (small: Int, large: Int), rounds: Int) async throws {
        let all = notes(sizes.large)
        print("\n## Single-create scaling: \(sizes.small) and \(sizes.large) single inserts into an empty store")
        struct Sample {
            var seconds: Double
            var cpu: Double
            var written: Int
        }
        var results: [String: [(small: Sample, large: Sample)]] = [:]
        for round in 1...rounds {
            for kind in FileKind.allCases {
                let directory = try makeDirectory()
                defer { remove(directory) }
                var small: Sample?
                var large: Sample?
                do {
                    let store = try kind.open(in: directory)
                    let start = Sample(seconds: now(), cpu: cpuSeconds(), written: writtenBytes())
                    func sample() -> Sample {
                        Sample(
                            seconds: now() - start.seconds,
                            cpu: cpuSeconds() - start.cpu,
                            written: writtenBytes() - start.written
                        )
                    }
                    for (index, note) in all.enumerated() {
                        try await store.insert(note)
                        if index + 1 == sizes.small { small = sample() }
                    }
                    large = sample()
                    guard try await store.count() == sizes.large else {
                        throw BenchmarkError(description: "\(kind.rawValue) lost records")
                    }
                }
                results[kind.rawValue, default: []].append((small!, large!))
                print(
                    "  round \(round) \(kind.rawValue): \(sizes.small) in \(String(format: "%.3f", small!.seconds)) s, "
                        + "\(sizes.large) in \(String(format: "%.3f", large!.seconds)) s "
                        + "(ratio \(String(format: "%.2f", large!.seconds / small!.seconds)), "
                        + "CPU ratio \(String(format: "%.2f", large!.cpu / small!.cpu)), "
                        + "bytes ratio \(String(format: "%.2f", Double(large!.written) / Double(small!.written))))"
                )
            }
        }
        print(
            "| store | \(sizes.small) creates | \(sizes.large) creates | per create | ratio (best round) | "
                + "ratio (each round) | CPU-time ratio | bytes-written ratio |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for kind in FileKind.allCases {
            let samples = results[kind.rawValue]!
            // The best round is the one whose whole run (the large size) was fastest.
            let best = samples.min { $0.large.seconds < $1.large.seconds }!
            let ratios = samples.map { String(format: "%.2f", $0.large.seconds / $0.small.seconds) }
            print(
                "| \(kind.rawValue) | \(String(format: "%.2f", best.small.seconds)) s | "
                    + "\(String(format: "%.2f", best.large.seconds)) s | "
                    + "\(String(format: "%.0f", best.large.seconds / Double(sizes.large) * 1e6)) µs | "
                    + "\(String(format: "%.2f", best.large.seconds / best.small.seconds)) | "
                    + "\(ratios.joined(separator: ", ")) | "
                    + "\(String(format: "%.2f", best.large.cpu / best.small.cpu)) | "
                    + "\(String(format: "%.2f", Double(best.large.written) / Double(best.small.written))) |"
            )
        }
    }

    /// User + system CPU time of this process (every thread), in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Bytes this process has passed to `write` and its kin (`wchar` of /proc/self/io).
    static func writtenBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("wchar:") })
        else { return 0 }
        return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }

    // MARK: - Peak memory

    /// What a memory child measures.
    enum MemoryCase: String, CaseIterable {
        /// The notes as a `[Note]`, no store: the reference.
        case array
        case memory
        case sqlite
        case plistXML = "plist-xml"
        case plistBinary = "plist-binary"
        case archive

        var title: String {
            switch self {
            case .array: "[Note] only (no store)"
            case .memory: "MemoryStore"
            case .sqlite: FileKind.sqlite.rawValue
            case .plistXML: FileKind.plistXML.rawValue
            case .plistBinary: FileKind.plistBinary.rawValue
            case .archive: FileKind.archive.rawValue
            }
        }

        var fileKind: FileKind? {
            switch self {
            case .array, .memory: nil
            case .sqlite: .sqlite
            case .plistXML: .plistXML
            case .plistBinary: .plistBinary
            case .archive: .archive
            }
        }
    }

    /// Runs every case in a fresh child process: `create` (make the notes, bulk-insert them into an empty store,
    /// release it), then `load` (open the store the first child left and `fetchAll()`).
    static func memory(records: Int) throws {
        print("\n## Peak memory: \(records) notes per store, each step in a fresh process")
        print("| store | create: peak RSS growth | load + fetchAll: peak RSS growth | file size |")
        print("|---|---|---|---|")
        for kind in MemoryCase.allCases {
            let directory = try makeDirectory()
            defer { remove(directory) }
            let create = try child(kind, phase: "create", directory: directory, records: records)
            var load = "—"
            var size = "—"
            if kind.fileKind != nil {
                load = mib(try child(kind, phase: "load", directory: directory, records: records))
                let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                let bytes = try files.reduce(0) { total, name in
                    let attributes = try FileManager.default.attributesOfItem(
                        atPath: directory.appendingPathComponent(name).path
                    )
                    return total + ((attributes[.size] as? Int) ?? 0)
                }
                size = mib(bytes)
            }
            print("| \(kind.title) | \(mib(create)) | \(load) | \(size) |")
        }
    }

    /// Starts `TetherBenchmarks --only store --store-child KIND --phase PHASE --dir DIR --records N` and returns the
    /// peak growth it reports.
    static func child(_ kind: MemoryCase, phase: String, directory: URL, records: Int) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [
            "--only", "store", "--store-child", kind.rawValue, "--phase", phase, "--dir", directory.path,
            "--records", String(records),
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let line = output.split(separator: "\n").last(where: { $0.hasPrefix("peak-growth ") }),
            let bytes = Int(line.dropFirst("peak-growth ".count))
        else {
            throw BenchmarkError(description: "memory child \(kind.rawValue) \(phase) failed: \(output)")
        }
        return bytes
    }

    /// The child's side: measures one step and prints `peak-growth <bytes>`.
    static func memoryChild(kind name: String, phase: String, directory: String, records: Int) async throws {
        guard let kind = MemoryCase(rawValue: name) else {
            throw BenchmarkError(description: "unknown store \(name)")
        }
        let directory = URL(fileURLWithPath: directory)
        let before = residentBytes()
        let (_, peak) = try await withPeakMemory {
            if phase == "load" {
                let store = try kind.fileKind!.open(in: directory)
                let count = try await store.fetchAll().count
                if count != records { throw BenchmarkError(description: "loaded \(count) of \(records)") }
                return
            }
            let all = notes(records)
            switch kind {
            case .array:
                if all.count != records { throw BenchmarkError(description: "no notes") }
            case .memory:
                let store = MemoryStore<Note>()
                for note in all { try await store.insert(note) }
            case .sqlite:
                let store = try SQLiteStore<Note>(
                    url: directory.appendingPathComponent("NotesList.sqlite3"),
                    tableName: "Note"
                )
                try await store.insert(contentsOf: all)
            case .plistXML, .plistBinary:
                let store = try PropertyListStore<Note>(
                    url: directory.appendingPathComponent("NotesList.plist"),
                    format: kind == .plistXML ? .xml : .binary
                )
                try await store.insert(contentsOf: all)
            case .archive:
                let store = try ArchiveStore<Note>(
                    url: directory.appendingPathComponent("NotesList.archive"),
                    rootKey: "NotesList"
                )
                try await store.insert(contentsOf: all)
            }
        }
        print("peak-growth \(peak - before)")
    }
}

/// The same table as `SQLiteStore` (`id TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL`, the same JSON bytes in
/// both columns) in a WAL `DatabasePool` with `synchronous = FULL` and a 10 s busy timeout, written with GRDB's plain
/// API: one reused `JSONEncoder`/`JSONDecoder`, a cached statement for bulk inserts.
final class RawGRDBNotes {
    let pool: DatabasePool
    private let encoder: JSONEncoder
    private let decoder = JSONDecoder()

    init(url: URL) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        pool = try DatabasePool(path: url.path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS Note (id TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL)")
        }
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
    }

    private func key(_ id: UUID) throws -> String {
        String(decoding: try encoder.encode(id), as: UTF8.self)
    }

    func insert(_ note: Note) async throws {
        let id = try key(note.id)
        let blob = try encoder.encode(note)
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO Note (id, record) VALUES (?, ?)", arguments: [id, blob])
        }
    }

    func insert(contentsOf notes: [Note]) async throws {
        let rows = try notes.map { (try key($0.id), try encoder.encode($0)) }
        try await pool.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO Note (id, record) VALUES (?, ?)")
            for (id, blob) in rows {
                try statement.execute(arguments: [id, blob])
            }
        }
    }

    func fetchOne(id: UUID) async throws -> Note? {
        let id = try key(id)
        let blob = try await pool.read { db in
            try Data.fetchOne(db, sql: "SELECT record FROM Note WHERE id = ?", arguments: [id])
        }
        return try blob.map { try decoder.decode(Note.self, from: $0) }
    }

    func fetchAll() async throws -> [Note] {
        let blobs = try await pool.read { db in try Data.fetchAll(db, sql: "SELECT record FROM Note ORDER BY rowid") }
        return try blobs.map { try decoder.decode(Note.self, from: $0) }
    }
}
