import NIOCore
import Testing
import TetherCore

struct FrameChecksumTests {
    private static let check = ByteBuffer(string: "123456789")

    @Test func checkValuesMatchTheContract() {
        #expect(FrameChecksum.crc8.compute(Self.check) == 0xF4)
        #expect(FrameChecksum.xor8.compute(Self.check) == 0x31)
        #expect(FrameChecksum.sum8.compute(Self.check) == 0xDD)
        #expect(FrameChecksum.none.compute(Self.check) == nil)
        #expect(
            FrameChecksum.crc8(CRC8(polynomial: 0x1D, initialValue: 0xFF, finalXOR: 0xFF)).compute(Self.check) == 0x4B
        )
    }

    @Test func byteCountIsZeroOnlyForNone() {
        #expect(FrameChecksum.none.byteCount == 0)
        #expect(FrameChecksum.crc8.byteCount == 1)
        #expect(FrameChecksum.crc8(.smbus).byteCount == 1)
        #expect(FrameChecksum.xor8.byteCount == 1)
        #expect(FrameChecksum.sum8.byteCount == 1)
    }

    @Test func crc8IsTheSMBusParameterSet() {
        #expect(FrameChecksum.crc8 == .crc8(.smbus))
        #expect(FrameChecksum.crc8 != .crc8(CRC8(polynomial: 0x1D)))
        #expect(FrameChecksum.xor8 != .sum8)
    }

    @Test func xorAndSumMatchByteAtATimeDefinitionsForEveryLength() {
        var rng = SplitMix64(seed: 0x5EED)
        for length in 0..<70 {
            let bytes = rng.bytes(length)
            var buffer = ByteBuffer(bytes: [0xAA] + bytes)
            buffer.moveReaderIndex(forwardBy: 1)  // unaligned start
            #expect(FrameChecksum.xor8.compute(buffer) == bytes.reduce(0, ^))
            #expect(FrameChecksum.sum8.compute(buffer) == bytes.reduce(0, &+))
            #expect(buffer.readerIndex == 1)
        }
    }
}
