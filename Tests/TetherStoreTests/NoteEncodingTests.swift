import Foundation
import Testing
import TetherStore

/// How a ``Note`` encodes, with the input `FuzzRecordFile` found (FUZZING.md, "Bugs found").
struct NoteEncodingTests {
    /// Found by FuzzRecordFile: notes whose dates were NaNs with two different payloads made Foundation's binary
    /// property list encoder trap ("Duplicate elements of type 'Reference' were found in a Set"), in about one
    /// process of twenty (it depends on the hash seed), inside `PropertyListStore(.binary)` and `ArchiveStore`
    /// writes. A NaN date is now always written as the canonical NaN.
    @Test func nanDatesAreWrittenAsTheCanonicalNaN() throws {
        let payloads: [UInt64] = [0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FF00_0000_0000, 0x7FF0_0000_0000_0001]
        let notes = payloads.map {
            Note(date: Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0)), content: "")
        }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let bytes = [UInt8](try encoder.encode(notes))
        // A binary property list real: marker 0x23, then the eight bytes big-endian.
        let canonical = [0x23] + withUnsafeBytes(of: Double.nan.bitPattern.bigEndian) { Array($0) }
        for payload in payloads {
            let other = [0x23] + withUnsafeBytes(of: payload.bigEndian) { Array($0) }
            #expect(!bytes.containsRun(other))
        }
        #expect(bytes.containsRun(canonical))
        let decoded = try PropertyListDecoder().decode([Note].self, from: Data(bytes))
        #expect(decoded.map(\.id) == notes.map(\.id))
        #expect(decoded.allSatisfy { $0.date.timeIntervalSinceReferenceDate.isNaN })
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsRun(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
