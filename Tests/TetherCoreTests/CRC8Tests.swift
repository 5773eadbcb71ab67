import NIOCore
import Testing
import TetherCore

struct CRC8Tests {
    private static let check = Array("123456789".utf8)

    /// A bit-at-a-time CRC-8, the definition the table-driven code must agree with.
    private static func reference(_ bytes: [UInt8], polynomial: UInt8, initialValue: UInt8, finalXOR: UInt8) -> UInt8 {
        var crc = initialValue
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 {
                crc = crc & 0x80 != 0 ? (crc << 1) ^ polynomial : crc << 1
            }
        }
        return crc ^ finalXOR
    }

    @Test func smbusCheckValueIs0xF4() {
        #expect(CRC8.smbus.checksum(Self.check) == 0xF4)
        #expect(CRC8().checksum(Self.check) == 0xF4)
        #expect(CRC8.smbus.checksum(ByteBuffer(bytes: Self.check)) == 0xF4)
    }

    @Test func contractVectorChecksumIs0xDA() {
        #expect(CRC8.smbus.checksum([0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69]) == 0xDA)
    }

    /// Catalogued CRC-8 parameter sets and their check values.
    @Test(arguments: [
        (polynomial: UInt8(0x07), initialValue: UInt8(0x00), finalXOR: UInt8(0x00), check: UInt8(0xF4)),  // SMBUS
        (0x07, 0x00, 0x55, 0xA1),  // I-432-1 (ITU)
        (0x1D, 0xFF, 0xFF, 0x4B),  // SAE-J1850
        (0x1D, 0xFD, 0x00, 0x7E),  // I-CODE
        (0x2F, 0xFF, 0xFF, 0xDF),  // AUTOSAR
        (0x9B, 0xFF, 0x00, 0xDA),  // CDMA2000
        (0x1D, 0x00, 0x00, 0x37),  // GSM-A
        (0x9B, 0x00, 0x00, 0xEA),  // LTE
    ])
    func parameterSetsMatchTheirCheckValues(
        polynomial: UInt8,
        initialValue: UInt8,
        finalXOR: UInt8,
        check: UInt8
    ) {
        let crc = CRC8(polynomial: polynomial, initialValue: initialValue, finalXOR: finalXOR)
        let expected = Self.reference(
            Self.check,
            polynomial: polynomial,
            initialValue: initialValue,
            finalXOR: finalXOR
        )
        #expect(expected == check)
        #expect(crc.checksum(Self.check) == check)
    }

    @Test func tableDrivenResultEqualsBitwiseReferenceForRandomInputs() {
        var rng = SplitMix64(seed: 0xC4C8)
        for _ in 0..<500 {
            let polynomial = UInt8.random(in: 0...255, using: &rng)
            let initialValue = UInt8.random(in: 0...255, using: &rng)
            let finalXOR = UInt8.random(in: 0...255, using: &rng)
            let bytes = rng.bytes(Int.random(in: 0...100, using: &rng))
            let crc = CRC8(polynomial: polynomial, initialValue: initialValue, finalXOR: finalXOR)
            let expected = Self.reference(bytes, polynomial: polynomial, initialValue: initialValue, finalXOR: finalXOR)
            #expect(crc.checksum(bytes) == expected)
            #expect(crc.checksum(ByteBuffer(bytes: bytes)) == expected)
            // A sequence without contiguous storage takes the byte-at-a-time path.
            #expect(crc.checksum(bytes.lazy.map { $0 }) == expected)
        }
    }

    @Test func changingTheParametersChangesTheChecksum() {
        var crc = CRC8.smbus
        crc.polynomial = 0x1D
        crc.initialValue = 0xFF
        crc.finalXOR = 0xFF
        #expect(crc.checksum(Self.check) == 0x4B)
        #expect(crc == CRC8(polynomial: 0x1D, initialValue: 0xFF, finalXOR: 0xFF))
        #expect(crc.hashValue == CRC8(polynomial: 0x1D, initialValue: 0xFF, finalXOR: 0xFF).hashValue)
        #expect(crc != .smbus)
    }

    @Test func checksumOfABufferLeavesItsReaderIndexAlone() {
        var buffer = ByteBuffer(bytes: [0xFF, 0xFF] + Self.check)
        buffer.moveReaderIndex(forwardBy: 2)
        #expect(CRC8.smbus.checksum(buffer) == 0xF4)
        #expect(buffer.readerIndex == 2)
    }

    @Test func emptyInputGivesInitialValueXORFinal() {
        #expect(CRC8(polynomial: 0x07, initialValue: 0x5A, finalXOR: 0x0F).checksum([UInt8]()) == 0x55)
    }
}
