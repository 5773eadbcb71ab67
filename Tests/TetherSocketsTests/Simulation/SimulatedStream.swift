import Foundation

/// The peer's byte stream in a simulation: the byte at every offset is a function of the seed, over a small
/// alphabet so that separators occur every few dozen bytes and a separator read can also run past its maximum.
struct SimulatedStream: Sendable {
    /// Bytes are drawn from `0..<alphabet`.
    static let alphabet: UInt8 = 12

    let seed: UInt64
    let separator: [UInt8]

    /// The byte at `offset`.
    func byte(at offset: Int) -> UInt8 {
        var z = seed &+ UInt64(truncatingIfNeeded: offset) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt8((z ^ (z >> 31)) % UInt64(Self.alphabet))
    }

    /// The bytes at `range` (a plain loop: a generic `map` costs more per byte than the rest of a schedule in a
    /// debug build, and long runs draw megabytes).
    func bytes(_ range: Range<Int>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: range.count) { buffer, count in
            for index in 0..<range.count { buffer[index] = byte(at: range.lowerBound + index) }
            count = range.count
        }
    }

    /// Whether `data` is the stream's bytes from `offset`.
    func matches(_ data: Data, at offset: Int) -> Bool {
        data.withUnsafeBytes { raw in
            for index in 0..<raw.count where raw[index] != byte(at: offset + index) { return false }
            return true
        }
    }

    /// Where the first separator at or after `offset` ends, looking no further than `limit`.
    func separatorEnd(from offset: Int, limit: Int) -> Int? {
        var position = offset
        while position + separator.count <= limit {
            var matches = true
            for (index, expected) in separator.enumerated() where byte(at: position + index) != expected {
                matches = false
                break
            }
            if matches { return position + separator.count }
            position += 1
        }
        return nil
    }

    /// The byte at `offset` of the socket's write stream (what the peer must receive).
    static func written(at offset: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: offset &* 7 &+ offset >> 9)
    }
}
