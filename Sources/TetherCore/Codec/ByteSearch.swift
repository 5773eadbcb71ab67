/// Byte searches over raw memory, eight bytes per step (TetherCore has no libc `memchr`).
enum ByteSearch {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The offset of the first `byte` in `bytes[start..<end]`, or `nil`.
    ///
    /// Uses the "has a zero byte" word trick: after XOR with the broadcast byte, a matching byte is zero; the lowest
    /// flagged byte of a little-endian word is the first match (false flags only appear above a true one).
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int? {
        var index = start
        let pattern = UInt64(byte) &* Self.ones
        while end &- index >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self).littleEndian ^ pattern
            let flags = (word &- Self.ones) & ~word & Self.highBits
            if flags != 0 {
                return index &+ (flags.trailingZeroBitCount &>> 3)
            }
            index &+= 8
        }
        while index < end {
            if bytes[index] == byte {
                return index
            }
            index &+= 1
        }
        return nil
    }

    /// The offset of the first occurrence of `needle` that starts in `start...lastStart` of `bytes`, or `nil`.
    ///
    /// - Precondition: `lastStart + needle.count <= bytes.count`, `needle` is not empty.
    @inline(__always)
    static func firstIndex(
        of needle: UnsafeBufferPointer<UInt8>,
        in bytes: UnsafeRawBufferPointer,
        from start: Int,
        lastStart: Int
    ) -> Int? {
        let first = needle[0]
        let count = needle.count
        var candidate = start
        while candidate <= lastStart {
            guard let found = Self.firstIndex(of: first, in: bytes, from: candidate, to: lastStart &+ 1) else {
                return nil
            }
            var matched = 1
            while matched < count && bytes[found &+ matched] == needle[matched] {
                matched &+= 1
            }
            if matched == count {
                return found
            }
            candidate = found &+ 1
        }
        return nil
    }
}
