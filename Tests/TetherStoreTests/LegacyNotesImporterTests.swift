import Foundation
import Testing

@testable import TetherStore

struct LegacyNotesImporterTests {
    static let url = URL(fileURLWithPath: "/nonexistent/NotesList.plist")

    static func seedFile(dates: [String]) throws -> Data {
        let list = dates.map { ["date": $0, "content": "note"] }
        return try PropertyListSerialization.data(fromPropertyList: list, format: .xml, options: 0)
    }

    @Test func seedNotesReadWithTheirDates() throws {
        let notes = try LegacyNotesImporter.legacyNotes(
            in: Self.seedFile(dates: ["2014-05-06 07:08:09"]),
            url: Self.url
        )
        #expect(notes?.map(\.date) == [Date(timeIntervalSince1970: 1_399_360_089)])
    }

    /// swift-corelibs-foundation's `DateFormatter.date(from:)` traps when its parse stops before a combining mark;
    /// such a date in a seed file is corrupt data, not a crash.
    @Test(arguments: ["2014-05-06 07:0\u{7EC}8:09", "2014-05-06 07:08:09\u{301}", "2014-05-06\t07:08:09"])
    func aDateWithAnythingButVisibleASCIIIsCorruptData(date: String) throws {
        let file = try Self.seedFile(dates: [date])
        let error = #expect(throws: StoreError.self) { try LegacyNotesImporter.legacyNotes(in: file, url: Self.url) }
        #expect(error?.code == .corruptData)
    }
}
