public import NIOCore

/// An MSB-first, non-reflected CRC-8 with any polynomial, initial value and final XOR.
///
/// The computation is table-driven. The default polynomial (`0x07`) handles eight bytes per step ("slicing by
/// eight"); other polynomials one byte per step. Tables are built once per process and shared, so a `CRC8` value is
/// just its three parameters.
///
/// ```swift
/// CRC8.smbus.checksum("123456789".utf8)   // 0xF4
/// CRC8(polynomial: 0x1D, initialValue: 0xFF, finalXOR: 0xFF).checksum([0x01, 0x02])
/// ```
public struct CRC8: Sendable, Hashable {
    /// The generator polynomial without its x⁸ term. Default `0x07`.
    public var polynomial: UInt8
    /// The register's value before the first byte. Default `0x00`.
    public var initialValue: UInt8
    /// XORed into the register after the last byte. Default `0x00`.
    public var finalXOR: UInt8

    /// Creates a CRC-8 parameter set.
    ///
    /// - Parameters:
    ///   - polynomial: The generator polynomial without its x⁸ term.
    ///   - initialValue: The register's value before the first byte.
    ///   - finalXOR: XORed into the register after the last byte.
    public init(polynomial: UInt8 = 0x07, initialValue: UInt8 = 0x00, finalXOR: UInt8 = 0x00) {
        self.polynomial = polynomial
        self.initialValue = initialValue
        self.finalXOR = finalXOR
    }

    /// CRC-8/SMBUS: polynomial `0x07`, initial value `0x00`, final XOR `0x00`; `check("123456789") == 0xF4`.
    public static let smbus = CRC8()

    /// The CRC-8 of a sequence of bytes.
    ///
    /// - Parameter bytes: The bytes; contiguous storage (arrays, `UTF8View`, buffer pointers) takes the fast path.
    /// - Returns: The checksum.
    public func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt8 where Bytes.Element == UInt8 {
        if let result = bytes.withContiguousStorageIfAvailable({ self.checksum(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        let table = CRC8Tables.byteTable(polynomial: self.polynomial)
        var crc = self.initialValue
        for byte in bytes {
            crc = table[Int(crc ^ byte)]
        }
        return crc ^ self.finalXOR
    }

    /// The CRC-8 of a buffer's readable bytes.
    ///
    /// - Parameter buffer: The bytes; its reader index is untouched.
    /// - Returns: The checksum.
    public func checksum(_ buffer: ByteBuffer) -> UInt8 {
        buffer.withUnsafeReadableBytes { self.checksum($0) }
    }

    /// The CRC-8 of raw memory.
    func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt8 {
        self.update(self.initialValue, with: bytes) ^ self.finalXOR
    }

    /// Runs the register over `bytes` without the initial value or final XOR.
    func update(_ register: UInt8, with bytes: UnsafeRawBufferPointer) -> UInt8 {
        var crc = register
        var offset = 0
        let count = bytes.count
        if self.polynomial == CRC8Tables.slicedPolynomial {
            let table = CRC8Tables.sliced
            while count &- offset >= 8 {
                let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
                // Bytes b0…b7 in memory order: CRC(c; b0…b7) = T7[c^b0] ^ T6[b1] ^ … ^ T0[b7] (the table is linear).
                let t7 = table[7 &* 256 &+ Int(UInt8(truncatingIfNeeded: word) ^ crc)]
                let t6 = table[6 &* 256 &+ Int(UInt8(truncatingIfNeeded: word &>> 8))]
                let t5 = table[5 &* 256 &+ Int(UInt8(truncatingIfNeeded: word &>> 16))]
                let t4 = table[4 &* 256 &+ Int(UInt8(truncatingIfNeeded: word &>> 24))]
                let t3 = table[3 &* 256 &+ Int(UInt8(truncatingIfNeeded: word &>> 32))]
                let t2 = table[2 &* 256 &+ Int(UInt8(truncatingIfNeeded: word &>> 40))]
                let t1 = table[1 &* 256 &+ Int(UInt8(truncatingIfNeeded: word &>> 48))]
                let t0 = table[Int(UInt8(truncatingIfNeeded: word &>> 56))]
                crc = t7 ^ t6 ^ t5 ^ t4 ^ t3 ^ t2 ^ t1 ^ t0
                offset &+= 8
            }
        }
        let table = CRC8Tables.byteTable(polynomial: self.polynomial)
        while offset < count {
            crc = table[Int(crc ^ bytes[offset])]
            offset &+= 1
        }
        return crc
    }
}

/// Lookup tables shared by every ``CRC8`` value, built once and never freed, so a `CRC8` is three plain bytes
/// (cheap to copy inside codecs and NIO handlers).
enum CRC8Tables {
    /// The polynomial with slicing-by-eight tables: CRC-8/SMBUS's, the default.
    static let slicedPolynomial: UInt8 = 0x07

    /// Eight 256-entry tables for ``slicedPolynomial``: entry `k * 256 + x` is the register after byte `x` followed
    /// by `k` zero bytes.
    // Immutable after initialisation (a `static let`, initialised once), so sharing it across threads is safe.
    nonisolated(unsafe) static let sliced: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 8 * 256)
        for value in 0..<256 {
            table[value] = CRC8Tables.register(afterByte: UInt8(value), polynomial: slicedPolynomial)
        }
        for slice in 1..<8 {
            for value in 0..<256 {
                table[slice * 256 + value] = table[Int(table[(slice - 1) * 256 + value])]
            }
        }
        return UnsafePointer(table)
    }()

    /// 256-entry tables for all 256 polynomials (64 KiB), built the first time a non-default polynomial is used.
    // Immutable after initialisation (a `static let`, initialised once), so sharing it across threads is safe.
    nonisolated(unsafe) static let everyPolynomial: UnsafePointer<UInt8> = {
        let tables = UnsafeMutablePointer<UInt8>.allocate(capacity: 256 * 256)
        for polynomial in 0..<256 {
            for value in 0..<256 {
                tables[polynomial * 256 + value] = CRC8Tables.register(
                    afterByte: UInt8(value),
                    polynomial: UInt8(polynomial)
                )
            }
        }
        return UnsafePointer(tables)
    }()

    /// The 256-entry table for `polynomial`.
    @inline(__always)
    static func byteTable(polynomial: UInt8) -> UnsafePointer<UInt8> {
        polynomial == Self.slicedPolynomial ? Self.sliced : Self.everyPolynomial + Int(polynomial) &* 256
    }

    private static func register(afterByte byte: UInt8, polynomial: UInt8) -> UInt8 {
        var crc = byte
        for _ in 0..<8 {
            crc = crc & 0x80 != 0 ? (crc << 1) ^ polynomial : crc << 1
        }
        return crc
    }
}
