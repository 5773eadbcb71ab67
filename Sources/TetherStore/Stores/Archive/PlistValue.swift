import Foundation

/// A property list value as it appears in a binary property list, including the keyed archiver's `UID` references.
enum PlistValue: Equatable {
    case string(String)
    case integer(Int64)
    /// A 16-byte integer above `Int64.max` (the property list form of a large `UInt64`).
    case unsignedInteger(UInt64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    case data(Data)
    case array([PlistValue])
    case dictionary([String: PlistValue])
    case uid(UInt64)
}
