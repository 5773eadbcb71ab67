public import Foundation

/// A property list value as it appears in a binary property list, including the keyed archiver's `UID` references.
/// Internal, and SPI for the fuzzers (``RecordFileParsing``).
@_spi(Fuzzing)
public enum PlistValue: Equatable {
    /// A string.
    case string(String)
    /// An integer that fits in 64 bits, signed.
    case integer(Int64)
    /// A 16-byte integer above `Int64.max` (the property list form of a large `UInt64`).
    case unsignedInteger(UInt64)
    /// A 32- or 64-bit floating-point number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// Seconds since 2001-01-01 00:00:00 UTC.
    case date(Double)
    /// Bytes.
    case data(Data)
    /// An array.
    case array([PlistValue])
    /// A dictionary with string keys.
    case dictionary([String: PlistValue])
    /// A keyed archiver's object reference.
    case uid(UInt64)
}
