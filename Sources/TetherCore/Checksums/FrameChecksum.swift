public import NIOCore

/// The 0- or 1-byte checksum trailer of an STX frame.
///
/// | Kind | Trailer | `check("123456789")` |
/// |---|---|---|
/// | ``none`` | no byte | — |
/// | ``crc8`` | CRC-8/SMBUS (``CRC8/smbus``) | `0xF4` |
/// | ``crc8(_:)`` | any ``CRC8`` parameter set | depends |
/// | ``xor8`` | XOR of all bytes (LRC) | `0x31` |
/// | ``sum8`` | sum of all bytes modulo 256 | `0xDD` |
public struct FrameChecksum: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case none
        case crc8(CRC8)
        case xor8
        case sum8
    }

    let kind: Kind

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// No trailer byte: frames are not checked.
    public static let none = FrameChecksum(.none)

    /// CRC-8/SMBUS (polynomial `0x07`, initial value `0x00`, no final XOR), the seed's checksum.
    public static let crc8 = FrameChecksum(.crc8(.smbus))

    /// A CRC-8 with any parameter set.
    ///
    /// - Parameter crc: The polynomial, initial value and final XOR.
    /// - Returns: The checksum kind.
    public static func crc8(_ crc: CRC8) -> FrameChecksum {
        FrameChecksum(.crc8(crc))
    }

    /// The XOR of all bytes (a longitudinal redundancy check).
    public static let xor8 = FrameChecksum(.xor8)

    /// The sum of all bytes modulo 256.
    public static let sum8 = FrameChecksum(.sum8)

    /// The trailer's size: 0 for ``none``, else 1.
    public var byteCount: Int {
        if case .none = self.kind {
            return 0
        }
        return 1
    }

    /// The checksum of a buffer's readable bytes.
    ///
    /// - Parameter buffer: The bytes; its reader index is untouched.
    /// - Returns: The checksum byte, or `nil` for ``none``.
    public func compute(_ buffer: ByteBuffer) -> UInt8? {
        if case .none = self.kind {
            return nil
        }
        return buffer.withUnsafeReadableBytes { self.compute($0) }
    }

    /// The checksum byte of raw memory (0 for ``none``, which has no byte).
    func compute(_ bytes: UnsafeRawBufferPointer) -> UInt8 {
        switch self.kind {
        case .none:
            return 0
        case .crc8(let crc):
            return crc.checksum(bytes)
        case .xor8:
            // Word-wide XOR, folded: XOR is per bit, so the bytes of the word can be combined in any order.
            var word: UInt64 = 0
            var offset = 0
            while bytes.count &- offset >= 8 {
                word ^= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset &+= 8
            }
            word ^= word &>> 32
            word ^= word &>> 16
            word ^= word &>> 8
            var result = UInt8(truncatingIfNeeded: word)
            while offset < bytes.count {
                result ^= bytes[offset]
                offset &+= 1
            }
            return result
        case .sum8:
            var sum: UInt8 = 0
            for byte in bytes {
                sum &+= byte
            }
            return sum
        }
    }
}
