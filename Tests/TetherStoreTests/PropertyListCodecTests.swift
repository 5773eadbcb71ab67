import Foundation
import Testing

@testable import TetherStore

/// The property-list store files, with the input `FuzzRecordFile` found (FUZZING.md, "Bugs found").
struct PropertyListCodecTests {
    /// Found by FuzzRecordFile: a note whose text was exactly `$null` was written, and the file then did not read
    /// back (Foundation's property-list decoder reads that string as nil): the store would not open again. Such a
    /// record is now refused with `.invalidArgument`, in both formats; control characters, which the first diagnosis
    /// blamed, round-trip in both.
    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func theNilMarkerIsRefusedAndControlCharactersRoundTrip(format: PropertyListSerialization.PropertyListFormat) throws
    {
        let url = URL(fileURLWithPath: "/tmp/notes.plist")
        let codec = PropertyListCodec<Note>(format: format, url: url)
        let marker = Note(content: "$null")
        let error = try #require(throws: StoreError.self) { try codec.encodeFile([Note(content: "kept"), marker]) }
        #expect(error.code == .invalidArgument)
        let entry = try #require(throws: StoreError.self) { try codec.encodeEntry(marker) }
        #expect(entry.code == .invalidArgument)
        let fine = [
            Note(content: "a\u{3}b\u{0}c\u{8}"), Note(content: "tab\there\r\nline"), Note(content: "costs $5"),
        ]
        #expect(try codec.decodeFile(codec.encodeFile(fine)) == fine)
    }

    /// Found by FuzzRecordFile (finding 10): an ``ArchiveStore`` wrote notes whose text was `$null` into an archive
    /// that then read back as `corruptData`, because the records' dictionaries go through `PropertyListDecoder`, as
    /// in bug 5. The archive codec now refuses them too, file and journal entry alike, and a store refuses the write
    /// and keeps what it had.
    @Test func theArchiveCodecRefusesTheNilMarkerAndTheStoreKeepsItsRecords() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nullmarker-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("notes.archive")
        let codec = ArchiveCodec<Note>(rootKey: "records", url: url)
        let marker = Note(content: "$null")
        let file = try #require(throws: StoreError.self) { try codec.encodeFile([Note(content: "kept"), marker]) }
        #expect(file.code == .invalidArgument)
        let entry = try #require(throws: StoreError.self) { try codec.encodeEntry(marker) }
        #expect(entry.code == .invalidArgument)
        let fine = [Note(content: "$nullish"), Note(content: "a $null inside"), Note(content: "")]
        #expect(try codec.decodeFile(codec.encodeFile(fine)) == fine)

        let kept = Note(content: "kept")
        do {
            let store = try ArchiveStore<Note>(url: url)
            try await store.insert(kept)
            let refused = await #expect(throws: StoreError.self) { try await store.insert(marker) }
            #expect(refused?.code == .invalidArgument)
            #expect(await store.fetchAll() == [kept])
        }
        let reopened = try ArchiveStore<Note>(url: url)
        #expect(await reopened.fetchAll() == [kept])
    }
}

extension PropertyListCodecTests {
    /// Found by FuzzRecordFile (bug 11): a binary property list whose UTF-16 string runs past the object it belongs
    /// to made Foundation's `PropertyListDecoder` stop the process (a trap in `BPlistMap.withBuffer`), so a damaged
    /// `NotesList.plist` or journal crashed the app that opened it. Such a file is `corruptData` now, untouched.
    @Test func aBinaryPropertyListThatTrapsFoundationIsCorruptData() throws {
        let seed = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Seeds/FuzzRecordFile/found-binary-plist-foundation-trap")
        let file = try Data(contentsOf: seed).dropFirst()  // the fuzzer's mode byte (1: a binary store file)
        let codec = PropertyListCodec<Note>(format: .binary, url: URL(fileURLWithPath: "/tmp/notes.plist"))
        let error = try #require(throws: StoreError.self) { try codec.decodeFile(Data(file)) }
        #expect(error.code == .corruptData)
    }
}
