import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The durable core of ``PropertyListStore`` and ``ArchiveStore``: the records in memory, the store file as of the
/// last compaction, and `<name>.journal` with one fsynced, checksummed entry per later change.
///
/// Not thread-safe: each store actor owns one and calls it from its isolation only.
final class FileRecordEngine<Codec: FileRecordCodec> {
    typealias Record = Codec.Record

    /// The journal is compacted into the store file once it is larger than the file and than this many bytes.
    static var compactionMinimumBytes: Int { 16 * 1024 }

    let url: URL
    let journalURL: URL
    private let codec: Codec
    private let lock: FileLock
    private(set) var records: OrderedRecords<Record>

    /// The journal, open for appending, when it extends the current store file.
    private var journal: Int32 = -1
    private var journalLength = 0
    private var fileLength = 0
    /// Set when the next write must first rewrite store file and journal (no file yet, a stale or torn journal, a
    /// compaction that failed).
    private var needsCompaction = false

    /// Bytes written to store file and journal since opening (how tests check that a write costs O(1)).
    private(set) var bytesWritten = 0
    /// Number of compactions since opening.
    private(set) var compactionCount = 0

    init(url: URL, codec: Codec) throws {
        let url = url.standardizedFileURL
        self.url = url
        self.journalURL = URL(fileURLWithPath: url.path + ".journal")
        self.codec = codec
        self.lock = try FileLock(url: URL(fileURLWithPath: url.path + ".lock"))

        // Read everything before changing anything: a damaged file must be left exactly as it is.
        let fileData = try FileIO.readIfExists(url)
        var records = OrderedRecords<Record>()
        if let fileData {
            for record in try codec.decodeFile(fileData) {
                guard !records.contains(record.id) else {
                    throw StoreError(code: .corruptData, message: "the file holds id \(record.id) twice", url: url)
                }
                records.put(record)
            }
        }
        var validJournalLength: Int?
        var journalSize = 0
        if let journalData = try FileIO.readIfExists(journalURL) {
            journalSize = journalData.count
            switch try Journal.readHeader(journalData, url: journalURL) {
            case .torn:
                break
            case .valid(let base):
                if let fileData, base == Journal.Base(of: fileData) {
                    let contents = try Journal.readEntries(journalData, url: journalURL)
                    try Self.replay(contents.entries, into: &records, codec: codec, url: journalURL)
                    validJournalLength = contents.validLength
                } else if fileData == nil {
                    throw StoreError(
                        code: .corruptData,
                        message: "the journal exists but the store file it extends is missing",
                        url: url
                    )
                }
            // Otherwise a compaction renamed the new file into place but was cut short before it restarted the
            // journal: the file already holds every change in it.
            }
        }
        self.records = records
        self.fileLength = fileData?.count ?? 0

        FileIO.removeLeftoverTemporaryFiles(for: url)
        FileIO.removeLeftoverTemporaryFiles(for: journalURL)
        if fileData != nil, let validJournalLength {
            journal = try FileIO.open(journalURL, O_WRONLY)
            if validJournalLength < journalSize {
                try FileIO.truncate(journal, to: validJournalLength, url: journalURL)
            }
            journalLength = validJournalLength
        } else {
            needsCompaction = true
        }
    }

    deinit {
        // A released store leaves a complete file and an empty journal behind (and no file if it never had one).
        let hasFile = FileManager.default.fileExists(atPath: url.path)
        if journalLength > Journal.headerSize || (needsCompaction && (hasFile || records.count > 0)) {
            try? compact()
        }
        if journal >= 0 { close(journal) }
    }

    // MARK: - Changes

    func insert(_ record: Record) throws {
        guard !records.contains(record.id) else {
            throw StoreError(code: .duplicateID, message: "a record with id \(record.id) exists", url: url)
        }
        try put(record)
    }

    func update(_ record: Record) throws {
        guard records.contains(record.id) else {
            throw StoreError(code: .notFound, message: "no record with id \(record.id)", url: url)
        }
        try put(record)
    }

    func upsert(_ record: Record) throws {
        try put(record)
    }

    func delete(id: Record.ID) throws -> Bool {
        guard records.contains(id) else { return false }
        let payload: Data
        do {
            payload = try JSONEncoder().encode([id])
        } catch {
            throw StoreError(code: .invalidArgument, message: "id \(id) cannot be encoded", url: url, underlying: error)
        }
        let old = records.remove(id)
        do {
            try persist(.delete, payload)
        } catch {
            if let old { records.put(old) }
            throw error
        }
        return true
    }

    /// Appends many records with one compaction (bulk loading).
    func insert(contentsOf newRecords: [Record]) throws {
        var seen = Set<Record.ID>()
        for record in newRecords {
            guard !records.contains(record.id), seen.insert(record.id).inserted else {
                throw StoreError(code: .duplicateID, message: "a record with id \(record.id) exists", url: url)
            }
        }
        let saved = records
        for record in newRecords { records.put(record) }
        do {
            try compact()
        } catch {
            records = saved
            throw error
        }
    }

    private func put(_ record: Record) throws {
        let payload = try codec.encodeEntry(record)
        let old = records.put(record)
        do {
            try persist(.put, payload)
        } catch {
            if let old {
                records.put(old)
            } else {
                records.remove(record.id)
            }
            throw error
        }
    }

    /// Makes the change already applied to `records` durable, or throws with the files as they were.
    private func persist(_ kind: Journal.Kind, _ payload: Data) throws {
        if needsCompaction || journal < 0 {
            try compact()
            return
        }
        let entry = Journal.entry(kind, payload)
        do {
            try entry.withUnsafeBytes { try FileIO.write(journal, $0, at: journalLength, url: journalURL) }
            try FileIO.sync(journal, url: journalURL)
        } catch {
            // Cut the partial entry off so that later entries do not follow garbage; if even that fails, the next
            // write starts from a fresh compaction.
            if (try? FileIO.truncate(journal, to: journalLength, url: journalURL)) == nil {
                needsCompaction = true
            }
            throw error
        }
        journalLength += entry.count
        bytesWritten += entry.count
        if journalLength > max(fileLength, Self.compactionMinimumBytes) {
            // The change is durable in the journal already; a failed compaction is retried at the next write.
            if (try? compact()) == nil {
                needsCompaction = true
            }
        }
    }

    /// Writes the records into a new store file and restarts the journal after it. Throws only when the store file
    /// could not be replaced; once it is, the change is durable and a failed journal restart is redone next time.
    func compact() throws {
        let data = try codec.encodeFile(records.all)
        do {
            try FileIO.writeAtomically(data, to: url)
        } catch {
            needsCompaction = true
            throw error
        }
        bytesWritten += data.count
        fileLength = data.count
        compactionCount += 1
        // From here the file holds every change; the old journal no longer matches it and is ignored on open.
        if journal >= 0 {
            close(journal)
            journal = -1
        }
        let header = Journal.header(for: Journal.Base(of: data))
        do {
            try FileIO.writeAtomically(Data(header), to: journalURL)
            journal = try FileIO.open(journalURL, O_WRONLY)
        } catch {
            needsCompaction = true
            return
        }
        bytesWritten += header.count
        journalLength = header.count
        needsCompaction = false
    }

    /// Swaps the journal's descriptor for a read-only one, so that the next append fails (tests of `.io`).
    func breakJournalForTesting() throws {
        if journal >= 0 { close(journal) }
        journal = try FileIO.open(URL(fileURLWithPath: "/dev/null"), O_RDONLY)
    }

    // MARK: - Opening

    private static func replay(
        _ entries: [Journal.Entry],
        into records: inout OrderedRecords<Record>,
        codec: Codec,
        url: URL
    ) throws {
        for (index, entry) in entries.enumerated() {
            do {
                switch entry.kind {
                case .put:
                    records.put(try codec.decodeEntry(entry.payload))
                case .delete:
                    for id in try JSONDecoder().decode([Record.ID].self, from: entry.payload) {
                        records.remove(id)
                    }
                }
            } catch {
                throw StoreError(
                    code: .corruptData,
                    message: "journal entry \(index + 1) cannot be decoded as \(Record.self)",
                    url: url,
                    underlying: error
                )
            }
        }
    }
}
