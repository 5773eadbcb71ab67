import Foundation
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherStore

#if canImport(Glibc)
import Glibc
#endif

/// The journal, compaction, damage and locking behaviour shared by `PropertyListStore` and `ArchiveStore`.
struct FileStoreDurabilityTests {
    private func fill(_ kind: StoreKind, in directory: URL, count: Int) async throws -> [Note] {
        let notes = (0..<count).map {
            Note(date: Date(timeIntervalSinceReferenceDate: Double($0) + 0.5), content: "n\($0)")
        }
        do {
            let store = try await kind.open(Note.self, in: directory)
            for note in notes { try await store.insert(note) }
        }
        try await waitUntilReleased(kind.fileURL(in: directory))
        return notes
    }

    @Test(arguments: StoreKind.journaled)
    func aSingleCreateAppendsOneJournalEntryAndLeavesTheStoreFileAlone(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let url = kind.fileURL(in: directory)
            let notes = (0..<2_000).map { Note(content: "bulk \($0) with some text to make the file bigger") }
            let store = try await kind.open(Note.self, in: directory)
            try await kind.bulkInsert(notes, into: store)
            let fileBefore = try contents(of: url)
            let journalURL = URL(fileURLWithPath: url.path + ".journal")
            let journalBefore = try contents(of: journalURL).count
            try await store.insert(Note(content: "one more"))
            #expect(try contents(of: url) == fileBefore)
            let growth = try contents(of: journalURL).count - journalBefore
            #expect(growth > 0 && growth < 1_000)
        }
    }

    @Test(arguments: StoreKind.journaled)
    func bytesWrittenGrowLinearlyWithTheNumberOfSingleCreates(kind: StoreKind) async throws {
        // The seed rewrote the whole file per create: n creates wrote O(n²) bytes (ratio ≈ 4 when n doubles).
        func bytes(for count: Int, in directory: URL) async throws -> Int {
            let url = kind.fileURL(in: directory)
            switch kind {
            case .archive:
                let store = try ArchiveStore<Note>(url: url)
                for index in 0..<count { try await store.insert(Note(content: "note \(index) with a little text")) }
                return await store.writeStatistics.bytes
            default:
                let store = try PropertyListStore<Note>(url: url, format: kind == .plistXML ? .xml : .binary)
                for index in 0..<count { try await store.insert(Note(content: "note \(index) with a little text")) }
                return await store.writeStatistics.bytes
            }
        }
        try await withTemporaryDirectory { directory in
            let small = directory.appendingPathComponent("small")
            let large = directory.appendingPathComponent("large")
            try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: large, withIntermediateDirectories: true)
            let smallBytes = try await bytes(for: 600, in: small)
            let largeBytes = try await bytes(for: 1_200, in: large)
            let ratio = Double(largeBytes) / Double(smallBytes)
            #expect(ratio < 2.6, "600 creates wrote \(smallBytes) bytes, 1200 wrote \(largeBytes) (ratio \(ratio))")
        }
    }

    @Test(arguments: StoreKind.journaled)
    func aReleasedStoreLeavesACompleteFileAndAnEmptyJournal(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let notes = try await fill(kind, in: directory, count: 5)
            let url = kind.fileURL(in: directory)
            #expect(try contents(of: URL(fileURLWithPath: url.path + ".journal")).count == Journal.headerSize)
            let decoded: [Note] =
                kind == .archive
                ? try ArchiveCodec<Note>(rootKey: "records", url: url).decodeFile(contents(of: url))
                : try PropertyListDecoder().decode([Note].self, from: contents(of: url))
            #expect(decoded == notes)
        }
    }

    @Test(arguments: StoreKind.journaled)
    func aMissingFileIsAnEmptyStoreAndIsCreatedByTheFirstWrite(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let url = kind.fileURL(in: directory)
            do {
                let store = try await kind.open(Note.self, in: directory)
                #expect(try await store.count() == 0)
            }
            #expect(!FileManager.default.fileExists(atPath: url.path))
            do {
                let store = try await kind.open(Note.self, in: directory)
                try await store.insert(Note(content: "first"))
                #expect(FileManager.default.fileExists(atPath: url.path))
            }
            #expect(try await kind.open(Note.self, in: directory).count() == 1)
        }
    }

    @Test(arguments: StoreKind.journaled)
    func aTruncatedStoreFileIsCorruptDataAndKeepsItsBytes(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            _ = try await fill(kind, in: directory, count: 10)
            let url = kind.fileURL(in: directory)
            let original = try contents(of: url)
            let truncated = original.prefix(original.count / 2)
            try truncated.write(to: url)
            await expectStoreError(.corruptData) { try await kind.open(Note.self, in: directory) }
            #expect(try contents(of: url) == truncated)
            try Data("garbage, not a store".utf8).write(to: url)
            await expectStoreError(.corruptData) { try await kind.open(Note.self, in: directory) }
            #expect(try contents(of: url) == Data("garbage, not a store".utf8))
        }
    }

    @Test func anArchiveUnderAnotherRootKeyIsCorruptDataAndKept() async throws {
        try await withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("notes.archive")
            do {
                let store = try ArchiveStore<Note>(url: url, rootKey: "NotesList")
                try await store.insert(Note(content: "x"))
            }
            try await waitUntilReleased(url)
            let bytes = try contents(of: url)
            let error = await expectStoreError(.corruptData) { try ArchiveStore<Note>(url: url, rootKey: "records") }
            #expect(error?.message.contains("NotesList") == true)
            #expect(try sameElements(contents(of: url), bytes))
        }
    }

    @Test(arguments: StoreKind.journaled)
    func aTornLastJournalEntryWasNeverAcknowledgedAndIsDropped(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let url = kind.fileURL(in: directory)
            let journalURL = URL(fileURLWithPath: url.path + ".journal")
            let notes = try await fill(kind, in: directory, count: 3)
            // Append two entries by hand, the second cut short as by a crash in the middle of its write.
            let codec: any FileRecordCodec<Note> =
                kind == .archive
                ? ArchiveCodec<Note>(rootKey: "records", url: url)
                : PropertyListCodec<Note>(format: kind == .plistXML ? .xml : .binary, url: url)
            let extra = Note(content: "appended")
            var journal = try contents(of: journalURL)
            journal.append(Journal.entry(.put, try codec.encodeEntry(extra)))
            let torn = Journal.entry(.put, try codec.encodeEntry(Note(content: "torn")))
            journal.append(torn.prefix(torn.count - 3))
            try journal.write(to: journalURL)
            let next = Note(content: "next")
            do {
                let store = try await kind.open(Note.self, in: directory)
                #expect(try await store.fetchAll() == notes + [extra])
                // The torn tail is cut off, so the next entry does not follow garbage.
                try await store.insert(next)
            }
            let store = try await kind.open(Note.self, in: directory)
            #expect(try await store.fetchAll() == notes + [extra, next])
        }
    }

    @Test(arguments: StoreKind.journaled)
    func damageInTheMiddleOfTheJournalIsCorruptDataAndKeepsBothFiles(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let url = kind.fileURL(in: directory)
            let journalURL = URL(fileURLWithPath: url.path + ".journal")
            _ = try await fill(kind, in: directory, count: 2)
            let codec = PropertyListCodec<Note>(format: .binary, url: url)
            var journal = try contents(of: journalURL)
            let first = Journal.entry(.put, try codec.encodeEntry(Note(content: "first")))
            var damaged = first
            damaged[damaged.count - 2] ^= 0xFF
            journal.append(damaged)
            journal.append(Journal.entry(.put, try codec.encodeEntry(Note(content: "second"))))
            try journal.write(to: journalURL)
            let fileBefore = try contents(of: url)
            await expectStoreError(.corruptData) { try await kind.open(Note.self, in: directory) }
            #expect(try contents(of: url) == fileBefore)
            #expect(try contents(of: journalURL) == journal)
        }
    }

    @Test(arguments: StoreKind.journaled)
    func aSecondInstanceOnTheSameFileIsLocked(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let first = try await kind.open(Note.self, in: directory)
            let note = Note(content: "kept")
            try await first.insert(note)
            await expectStoreError(.locked) { try await kind.open(Note.self, in: directory, waitingForRelease: false) }
            try await first.insert(Note(content: "still writable"))
            #expect(try await first.count() == 2)
        }
    }

    /// A refused lock closes its own descriptor once. (It used to close it a second time, in the deinit that a
    /// class runs when its init throws after setting every property: by then another thread may hold that number.)
    /// One thread is refused the lock over and over while another keeps making pipes and using them at once.
    @Test func aRefusedLockClosesNoDescriptorButItsOwn() async throws {
        try await withTemporaryDirectory { directory in
            let lockURL = directory.appendingPathComponent("refused.lock")
            let held = try FileLock(url: lockURL)
            defer { withExtendedLifetime(held) {} }
            final class Flag: Sendable {
                private let value = LockedBox(false)
                var isSet: Bool { value.withLock { $0 } }
                func set() { value.withLock { $0 = true } }
            }
            let done = Flag()
            // The pipe thread: every descriptor it makes must still be its own when it uses it.
            let pipes = Task {
                try await offPool { () -> (made: Int, lost: Int) in
                    var made = 0
                    var lost = 0
                    var byte: UInt8 = 7
                    while !done.isSet || made < 1_000 {
                        var ends: [Int32] = [-1, -1]
                        guard pipe(&ends) == 0 else { continue }
                        made += 1
                        if write(ends[1], &byte, 1) != 1 || read(ends[0], &byte, 1) != 1 { lost += 1 }
                        close(ends[0])
                        close(ends[1])
                    }
                    return (made, lost)
                }
            }
            let refusals = try await offPool { () -> Int in
                var refused = 0
                for _ in 0..<5_000 {
                    do {
                        _ = try FileLock(url: lockURL)
                    } catch let error as StoreError where error.code == .locked {
                        refused += 1
                    }
                }
                done.set()
                return refused
            }
            let (made, lost) = try await pipes.value
            #expect(refusals == 5_000)
            #expect(made >= 1_000)
            #expect(lost == 0, "\(lost) of \(made) pipes lost a descriptor to a refused lock")
        }
    }

    @Test(arguments: StoreKind.journaled)
    func leftoverTemporaryFilesAreRemovedOnOpen(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            _ = try await fill(kind, in: directory, count: 2)
            let url = kind.fileURL(in: directory)
            let leftover = URL(fileURLWithPath: url.path + ".k3j4h5.tmp")
            try Data("half a compaction".utf8).write(to: leftover)
            let store = try await kind.open(Note.self, in: directory)
            #expect(try await store.count() == 2)
            #expect(!FileManager.default.fileExists(atPath: leftover.path))
        }
    }

    @Test(arguments: StoreKind.journaled)
    func aCompactionCutShortAfterItsRenameIsNotReplayedTwice(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let url = kind.fileURL(in: directory)
            let journalURL = URL(fileURLWithPath: url.path + ".journal")
            var notes: [Note] = []
            var staleJournal = Data()
            do {
                let store = try await kind.open(Note.self, in: directory)
                notes = (0..<3).map { Note(content: "n\($0)") }
                for note in notes { try await store.insert(note) }
                try await store.delete(id: notes[0].id)
                notes.removeFirst()
                staleJournal = try contents(of: journalURL)
            }
            try await waitUntilReleased(url)
            // The store file now holds everything; put back the journal a crash would have left behind.
            try staleJournal.write(to: journalURL)
            let store = try await kind.open(Note.self, in: directory)
            #expect(try await store.fetchAll() == notes)
        }
    }

    @Test(arguments: StoreKind.journaled)
    func aJournalRestartCutShortInItsHeaderHoldsNothingAndIsRestarted(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let url = kind.fileURL(in: directory)
            let journalURL = URL(fileURLWithPath: url.path + ".journal")
            let notes = try await fill(kind, in: directory, count: 3)
            try Data(Journal.magic + [0, 0, 0]).write(to: journalURL)
            let next = Note(content: "after the torn header")
            do {
                let store = try await kind.open(Note.self, in: directory)
                #expect(try await store.fetchAll() == notes)
                try await store.insert(next)
            }
            let store = try await kind.open(Note.self, in: directory)
            #expect(try await store.fetchAll() == notes + [next])
        }
    }

    @Test func openStepFormatIsAnInvalidArgument() async throws {
        try await withTemporaryDirectory { directory in
            await expectStoreError(.invalidArgument) {
                try PropertyListStore<Note>(url: directory.appendingPathComponent("a.plist"), format: .openStep)
            }
        }
    }

    @Test func xmlKeepsPlainDatesToWholeSecondsAndBinaryKeepsThemExactly() async throws {
        try await withTemporaryDirectory { directory in
            let item = Item(id: "a", title: "t", date: Date(timeIntervalSince1970: 1_700_000_000.123456))
            for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
                let url = directory.appendingPathComponent("items-\(format.rawValue).plist")
                do {
                    let store = try PropertyListStore<Item>(url: url, format: format)
                    try await store.insert(item)
                }
                let stored = try await PropertyListStore<Item>(url: url, format: format).fetchAll()
                let expected = format == .xml ? 1_700_000_000.0 : 1_700_000_000.123456
                #expect(stored.first?.date.timeIntervalSince1970 == expected)
            }
        }
    }

    @Test(arguments: [StoreKind.plistBinary, .plistXML, .archive, .sqlite])
    func aRecordThatCannotBeEncodedIsAnInvalidArgumentAndChangesNothing(kind: StoreKind) async throws {
        struct Bad: Codable, Identifiable, Sendable {
            var id: String
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(id, .init(codingPath: [], debugDescription: "refuses"))
            }
        }
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Bad.self, in: directory)
            await expectStoreError(.invalidArgument) { try await store.insert(Bad(id: "x")) }
            #expect(try await store.count() == 0)
        }
    }

    @Test(arguments: [StoreKind.plistXML, .plistBinary, .archive, .sqlite])
    func aNotANumberThatTheFormatCannotHoldIsAnInvalidArgument(kind: StoreKind) async throws {
        try await withTemporaryDirectory { directory in
            let store = try await kind.open(Item.self, in: directory)
            let item = Item(id: "nan", title: "t", score: .nan)
            do {
                try await store.insert(item)
                // A format that holds NaN must give it back.
                let stored = try await store.fetchOne(id: "nan")
                #expect(stored?.score.isNaN == true, "NaN was accepted but not kept by \(kind)")
            } catch let error as StoreError {
                #expect(error.code == .invalidArgument)
                #expect(try await store.count() == 0)
            }
        }
    }

    @Test func aFailedJournalWriteRollsBackThrowsIOAndTheNextWriteRecovers() async throws {
        try await withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("store.plist")
            let kept = Note(content: "kept")
            let later = Note(content: "later")
            do {
                let store = try PropertyListStore<Note>(url: url, format: .binary)
                try await store.insert(kept)
                // The journal descriptor becomes read-only: the next append fails as a full disk would.
                try await store.breakJournalForTesting()
                await expectStoreError(.io) { try await store.insert(Note(content: "lost")) }
                #expect(await store.fetchAll() == [kept])
                try await store.insert(later)
            }
            let store = try PropertyListStore<Note>(url: url, format: .binary)
            #expect(await store.fetchAll() == [kept, later])
        }
    }
}
