import NIOCore

/// What a queued read waits for. Shared by both faces.
enum ReadKind: Sendable, Equatable {
    /// At least one byte, at most `maxLength` (0 = no cap).
    case available(maxLength: Int)
    /// Exactly `length` bytes (≥ 1).
    case length(Int)
    /// Bytes up to and including `separator`; `maxLength` (0 = no cap) counts the separator.
    case separator([UInt8], maxLength: Int)

    /// The total a length read waits for; 0 for other kinds (the original's progress "total").
    var total: Int {
        if case .length(let length) = self { return length }
        return 0
    }
}
