public import NIOCore

/// An MSB-first, non-reflected CRC-8 with any polynomial, initial value and final XOR.
///
/// The computation is table-driven and handles eight bytes per step ("slicing by eight"). The tables for a
/// parameter set are built once, when the value is made or its polynomial changes; the default polynomial's tables
/// are shared.
///
/// ```swift
/// CRC8.smbus.checksum("123456789".utf8)   // 0xF4
/// CRC8(polynomial: 0x1D, initialValue: 0xFF, finalXOR: 0xFF).checksum([0x01, 0x02])
/// ```
public struct CRC8: Sendable, Hashable {
    /// The generator polynomial without its x⁸ term. Default `0x07`.
    public var polynomial: UInt8 {
        didSet {
            if self.polynomial != oldValue {
                self.tables = Self.makeTables(polynomial: self.polynomial)
            }
        }
    }
    /// The register's value before the first byte. Default `0x00`.
    public var initialValue: UInt8
    /// XORed into the register after the last byte. Default `0x00`.
    public var finalXOR: UInt8

    /// Eight 256-entry tables: `tables[k * 256 + x]` is the register after byte `x` followed by `k` zero bytes.
    private var tables: [UInt8]

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
        self.tables = Self.makeTables(polynomial: polynomial)
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
        return self.tables.withUnsafeBufferPointer { table in
            var crc = self.initialValue
            for byte in bytes {
                crc = table[Int(crc ^ byte)]
            }
            return crc ^ self.finalXOR
        }
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
        self.tables.withUnsafeBufferPointer { table in
            var crc = register
            var offset = 0
            let count = bytes.count
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
            while offset < count {
                crc = table[Int(crc ^ bytes[offset])]
                offset &+= 1
            }
            return crc
        }
    }

    public static func == (lhs: CRC8, rhs: CRC8) -> Bool {
        lhs.polynomial == rhs.polynomial && lhs.initialValue == rhs.initialValue && lhs.finalXOR == rhs.finalXOR
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.polynomial)
        hasher.combine(self.initialValue)
        hasher.combine(self.finalXOR)
    }

    private static let defaultTables = Self.buildTables(polynomial: 0x07)

    private static func makeTables(polynomial: UInt8) -> [UInt8] {
        polynomial == 0x07 ? Self.defaultTables : Self.buildTables(polynomial: polynomial)
    }

    private static func buildTables(polynomial: UInt8) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 8 * 256) { table, initialized in
            for value in 0..<256 {
                var crc = UInt8(value)
                for _ in 0..<8 {
                    crc = crc & 0x80 != 0 ? (crc << 1) ^ polynomial : crc << 1
                }
                table[value] = crc
            }
            for slice in 1..<8 {
                for value in 0..<256 {
                    table[slice * 256 + value] = table[Int(table[(slice - 1) * 256 + value])]
                }
            }
            initialized = 8 * 256
        }
    }
}
