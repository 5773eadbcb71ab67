import Foundation

/// A reader and writer of the binary property list format (`bplist00`), including `UID` objects, which Foundation's
/// `PropertyListSerialization` does not expose. Every read is bounds-checked: bad bytes throw, never trap.
enum BinaryPropertyList {
    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    /// A shallow object of the object table: containers hold object indices.
    enum RawObject {
        case scalar(PlistValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// Parses a whole binary property list.
    static func read(_ data: Data) throws -> PlistValue {
        let reader = try Reader(data)
        return try reader.value(reader.topObject)
    }

    /// Writes `value` as a binary property list; equal strings are stored once.
    static func write(_ value: PlistValue) -> Data {
        var writer = Writer()
        let top = writer.flatten(value)
        return writer.encode(top: top)
    }
}
