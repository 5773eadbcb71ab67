import Foundation
import Testing

@testable import TetherStore

/// The XML store file, with the input `FuzzRecordFile` found (FUZZING.md, "Bugs found").
struct PropertyListCodecTests {
    /// Found by FuzzRecordFile: a note whose content held a control character (here U+0003) was written to the XML
    /// file unescaped, and the file then did not read back: the store would not open again. Such a record is now
    /// refused with `.invalidArgument`; tab, line feed and carriage return still round-trip.
    @Test func controlCharactersAreRefusedInXMLAndKeptInBinary() throws {
        let url = URL(fileURLWithPath: "/tmp/notes.plist")
        let xml = PropertyListCodec<Note>(format: .xml, url: url)
        let bad = Note(content: "a\u{3}b\u{0}c")
        #expect(throws: StoreError.self) { try xml.encodeFile([bad]) }
        do {
            _ = try xml.encodeEntry(bad)
            Issue.record("a journal entry with a control character was written")
        } catch let error as StoreError {
            #expect(error.code == .invalidArgument)
        }
        let fine = Note(content: "tab\there\r\nline")
        #expect(try xml.decodeFile(xml.encodeFile([fine])) == [fine])
        let binary = PropertyListCodec<Note>(format: .binary, url: url)
        #expect(try binary.decodeFile(binary.encodeFile([bad])) == [bad])
    }
}
