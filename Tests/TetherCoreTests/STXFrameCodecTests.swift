import NIOCore
import Testing
import TetherCore

struct STXFrameCodecTests {
    /// Destination 1, source 2, payload "hi", defaults: the seed's example frame.
    static let vector: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA]
    static let hi = STXFrame(destination: 1, source: 2, bytes: "hi".utf8)

    private static func frameBytes(
        _ frame: STXFrame,
        codec: STXFrameCodec = STXFrameCodec()
    ) throws -> [UInt8] {
        try codec.encode(frame).bytes
    }

    private static func decodeOne(
        _ bytes: [UInt8],
        codec: STXFrameCodec = STXFrameCodec()
    ) throws -> (FrameDecodingResult<STXFrame>, ByteBuffer) {
        var codec = codec
        var buffer = ByteBuffer(bytes: bytes)
        let result = try codec.decode(from: &buffer)
        return (result, buffer)
    }

    // MARK: - The contract vector

    @Test func encodesTheContractVector() throws {
        #expect(try Self.frameBytes(Self.hi) == Self.vector)
    }

    @Test func decodesTheContractVector() throws {
        let (result, buffer) = try Self.decodeOne(Self.vector)
        #expect(result == .frame(Self.hi))
        #expect(buffer.readableBytes == 0)
        #expect(STXFrameCodec.headerLength == 7)
    }

    @Test func defaultsAreTheSeedsFormat() {
        let codec = STXFrameCodec()
        #expect(codec.startByte == 0x02)
        #expect(codec.endianness == .little)
        #expect(codec.checksum == .crc8)
        #expect(codec.maxPayloadLength == 65_535)
        #expect(codec.resynchronization == .fail)
        #expect(codec.discardedByteCount == 0)
    }

    @Test func decodedPayloadIsASliceOfTheReceivedBytes() throws {
        var buffer = ByteBuffer(bytes: Self.vector)
        var codec = STXFrameCodec()
        guard case .frame(let frame) = try codec.decode(from: &buffer) else {
            Issue.record("no frame")
            return
        }
        let payloadAddress = frame.payload.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        let bufferAddress = buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(payloadAddress == bufferAddress + 7)
    }

    // MARK: - Fields, byte orders, checksum kinds

    @Test func bigEndianAppliesToDestinationSourceAndLength() throws {
        let codec = STXFrameCodec(endianness: .big)
        let frame = STXFrame(destination: 0x0102, source: 0x0304, bytes: [0xAA])
        let bytes = try Self.frameBytes(frame, codec: codec)
        #expect(Array(bytes[0..<7]) == [0x02, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01])
        #expect(bytes[8] == CRC8.smbus.checksum(bytes[0..<8]))
        #expect(try Self.decodeOne(bytes, codec: codec).0 == .frame(frame))
    }

    @Test func littleEndianAppliesToDestinationSourceAndLength() throws {
        let frame = STXFrame(destination: 0x0102, source: 0x0304, bytes: [UInt8](repeating: 7, count: 0x0105))
        let bytes = try Self.frameBytes(frame)
        #expect(Array(bytes[0..<7]) == [0x02, 0x02, 0x01, 0x04, 0x03, 0x05, 0x01])
        #expect(try Self.decodeOne(bytes).0 == .frame(frame))
    }

    @Test func customStartByteIsWrittenAndRequired() throws {
        let codec = STXFrameCodec(startByte: 0x7E)
        let bytes = try Self.frameBytes(Self.hi, codec: codec)
        #expect(bytes[0] == 0x7E)
        #expect(try Self.decodeOne(bytes, codec: codec).0 == .frame(Self.hi))
        expectFramingError(.badStartByte) { try Self.decodeOne(Self.vector, codec: codec) }
    }

    @Test(arguments: [
        FrameChecksum.crc8, .crc8(CRC8(polynomial: 0x1D, initialValue: 0xFF, finalXOR: 0xFF)), .xor8, .sum8,
    ])
    func checksumCoversStartByteHeaderAndPayload(checksum: FrameChecksum) throws {
        let codec = STXFrameCodec(checksum: checksum)
        let bytes = try Self.frameBytes(Self.hi, codec: codec)
        #expect(bytes.count == 10)
        #expect(bytes.last == checksum.compute(ByteBuffer(bytes: bytes[0..<9])))
        #expect(try Self.decodeOne(bytes, codec: codec).0 == .frame(Self.hi))
        // A changed destination, source or payload byte is caught; a changed start byte fails earlier.
        for index in [1, 2, 3, 4, 7, 8] {
            var corrupted = bytes
            corrupted[index] ^= 0x01
            expectFramingError(.checksumMismatch) { try Self.decodeOne(corrupted, codec: codec) }
        }
        var badStart = bytes
        badStart[0] = 0x03
        expectFramingError(.badStartByte) { try Self.decodeOne(badStart, codec: codec) }
    }

    @Test func checksumCoversTheLengthField() throws {
        // "hi" plus one byte, announced as 2 bytes + a forged trailer: the length field is under the checksum.
        var bytes = try Self.frameBytes(STXFrame(destination: 1, source: 2, bytes: "hij".utf8))
        bytes[5] = 0x02
        expectFramingError(.checksumMismatch) { try Self.decodeOne(bytes) }
    }

    @Test func noChecksumMeansNoTrailerByte() throws {
        let codec = STXFrameCodec(checksum: .none)
        let bytes = try Self.frameBytes(Self.hi, codec: codec)
        #expect(bytes == Array(Self.vector.dropLast()))
        let (result, buffer) = try Self.decodeOne(bytes + [0xEE], codec: codec)
        #expect(result == .frame(Self.hi))
        #expect(buffer.bytes == [0xEE])
    }

    @Test func zeroLengthPayload() throws {
        let frame = STXFrame(destination: 9, source: 8, payload: ByteBuffer())
        let bytes = try Self.frameBytes(frame)
        #expect(bytes.count == 8)
        #expect(Array(bytes[5..<7]) == [0, 0])
        let (result, buffer) = try Self.decodeOne(bytes)
        #expect(result == .frame(frame))
        #expect(buffer.readableBytes == 0)
    }

    @Test func maximumLengthPayload() throws {
        var rng = SplitMix64(seed: 65_535)
        let frame = STXFrame(destination: 0xFFFF, source: 0, bytes: rng.bytes(65_535))
        let bytes = try Self.frameBytes(frame)
        #expect(bytes.count == 7 + 65_535 + 1)
        #expect(Array(bytes[5..<7]) == [0xFF, 0xFF])
        #expect(try Self.decodeOne(bytes).0 == .frame(frame))
        #expect(try Self.decodeOne(Array(bytes.dropLast())).0 == .needMoreData)
    }

    @Test func configuredMaximumPayloadIsAcceptedAndOneMoreIsRefused() throws {
        let codec = STXFrameCodec(maxPayloadLength: 4)
        let four = STXFrame(destination: 1, source: 1, bytes: [1, 2, 3, 4])
        #expect(try Self.decodeOne(try Self.frameBytes(four, codec: codec), codec: codec).0 == .frame(four))
        let five = STXFrame(destination: 1, source: 1, bytes: [1, 2, 3, 4, 5])
        let fiveBytes = try Self.frameBytes(five)
        expectFramingError(.frameTooLarge) { try Self.decodeOne(fiveBytes, codec: codec) }
    }

    // MARK: - Hostile input

    @Test func garbageBeforeAStartByteFailsWithBadStartByteAndKeepsTheBytes() throws {
        let garbage: [UInt8] = Array(0x10..<0x24)  // 20 bytes, no 0x02
        var codec = STXFrameCodec()
        var buffer = ByteBuffer(bytes: garbage + Self.vector)
        let error = try #require(throws: FramingError.self) { try codec.decode(from: &buffer) }
        #expect(error.code == .badStartByte)
        #expect(error.bytes?.bytes == Array(garbage.prefix(16)))
        #expect(error.message == "first byte 0x10, expected start byte 0x02")
        #expect(buffer.readerIndex == 0)
        #expect(buffer.bytes == garbage + Self.vector)
    }

    @Test func garbageBeforeAStartByteIsSkippedAndCounted() throws {
        let garbage: [UInt8] = [0xFF, 0x00, 0x13, 0x37, 0x42]
        var codec = STXFrameCodec(resynchronization: .skipToNextStartByte)
        var buffer = ByteBuffer(bytes: garbage + Self.vector + garbage + Self.vector)
        #expect(try codec.decode(from: &buffer) == .frame(Self.hi))
        #expect(codec.discardedByteCount == 5)
        #expect(try codec.decode(from: &buffer) == .frame(Self.hi))
        #expect(codec.discardedByteCount == 10)
        #expect(try codec.decode(from: &buffer) == .needMoreData)
        #expect(buffer.readableBytes == 0)
    }

    @Test func garbageWithoutAnyStartByteIsDiscardedWhole() throws {
        var codec = STXFrameCodec(resynchronization: .skipToNextStartByte)
        var buffer = ByteBuffer(bytes: [UInt8](repeating: 0x55, count: 100))
        #expect(try codec.decode(from: &buffer) == .needMoreData)
        #expect(buffer.readableBytes == 0)
        #expect(codec.discardedByteCount == 100)
        #expect(try codec.decodeLast(from: &buffer) == .needMoreData)
    }

    @Test func startByteInsideGarbageIsResynchronisedPast() throws {
        // 0x02 in the garbage starts a false header (length 3); its "checksum" fails, so the codec drops that
        // start byte and finds the real frame.
        let garbage: [UInt8] = [0xAB, 0x02, 0x11, 0x22, 0x33, 0x44, 0x03, 0x00, 0x99]
        let stream = garbage + Self.vector
        for chunking in [Chunking.allAtOnce, .byteByByte, .random(seed: 7)] {
            let outcome = drive(
                STXFrameCodec(resynchronization: .skipToNextStartByte),
                chunks: chunking.chunks(of: stream),
                discardedByteCount: { $0.discardedByteCount }
            )
            #expect(outcome.frames == [Self.hi], "\(chunking)")
            #expect(outcome.discarded == garbage.count, "\(chunking)")
            #expect(outcome.errorCode == nil)
        }
    }

    @Test func startByteInsideGarbageWithFailPolicyIsAChecksumError() throws {
        let garbage: [UInt8] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x01, 0x00, 0x99, 0x98]
        var codec = STXFrameCodec()
        var buffer = ByteBuffer(bytes: garbage + Self.vector)
        let error = try #require(throws: FramingError.self) { try codec.decode(from: &buffer) }
        #expect(error.code == .checksumMismatch)
        #expect(error.bytes?.bytes == Array(garbage[0..<9]))
        #expect(buffer.readerIndex == 0)
    }

    @Test func falseStartAnnouncingMoreThanTheStreamHoldsIsSkippedAtEndOfStream() throws {
        // The false header announces 0x3000 bytes that never come; at end of stream the codec gives up on it and
        // still delivers the real frame after it.
        let garbage: [UInt8] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30]
        let stream = garbage + Self.vector
        for chunking in [Chunking.allAtOnce, .byteByByte] {
            let outcome = drive(
                STXFrameCodec(resynchronization: .skipToNextStartByte),
                chunks: chunking.chunks(of: stream),
                discardedByteCount: { $0.discardedByteCount }
            )
            #expect(outcome.frames == [Self.hi], "\(chunking)")
            #expect(outcome.discarded == garbage.count)
            #expect(outcome.errorCode == nil)
        }
    }

    @Test func badChecksumFailsWithTheWholeFrameAttached() throws {
        var bytes = Self.vector
        bytes[9] = 0x1F
        var codec = STXFrameCodec()
        var buffer = ByteBuffer(bytes: bytes + [0x02, 0x01])
        let error = try #require(throws: FramingError.self) { try codec.decode(from: &buffer) }
        #expect(error.code == .checksumMismatch)
        #expect(error.message == "checksum 0x1F, expected 0xDA")
        #expect(error.bytes?.bytes == bytes)
        #expect(buffer.readerIndex == 0)
        #expect(buffer.bytes == bytes + [0x02, 0x01])
    }

    @Test func badChecksumIsSkippedWithTheSkipPolicy() throws {
        var bad = Self.vector
        bad[8] ^= 0xFF
        // The bad frame's inner 0x02 bytes (source, length) are false starts; with a small maximum their
        // "lengths" are refused at once, so the codec reaches the good frame without waiting.
        var codec = STXFrameCodec(maxPayloadLength: 16, resynchronization: .skipToNextStartByte)
        var buffer = ByteBuffer(bytes: bad + Self.vector)
        #expect(try codec.decode(from: &buffer) == .frame(Self.hi))
        #expect(codec.discardedByteCount == bad.count)
        // With the default maximum a false start announces up to 65 535 bytes and waits for them; at the end of the
        // stream the codec gives up on it and still finds the good frame.
        let outcome = drive(
            STXFrameCodec(resynchronization: .skipToNextStartByte),
            chunks: [(bad + Self.vector)[...]],
            discardedByteCount: { $0.discardedByteCount }
        )
        #expect(outcome.frames == [Self.hi])
        #expect(outcome.discarded == bad.count)
    }

    @Test func hugeLengthFailsAtOnceWithOnlyTheSevenHeaderBytes() throws {
        var codec = STXFrameCodec(maxPayloadLength: 1_024)
        let header: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x60, 0xEA]  // announces 60 000 bytes
        var buffer = ByteBuffer(bytes: header)
        let error = try #require(throws: FramingError.self) { try codec.decode(from: &buffer) }
        #expect(error.code == .frameTooLarge)
        #expect(error.bytes?.bytes == header)
        #expect(buffer.readerIndex == 0)
        // Six bytes are not yet a header: nothing can be said.
        var six = ByteBuffer(bytes: header.prefix(6))
        #expect(try codec.decode(from: &six) == .needMoreData)
    }

    @Test func hugeLengthWithSkipPolicyDropsTheStartByteAtOnce() throws {
        var codec = STXFrameCodec(maxPayloadLength: 1_024, resynchronization: .skipToNextStartByte)
        var buffer = ByteBuffer(bytes: [0x02, 0x01, 0x00, 0x02, 0x00, 0x60, 0xEA] + Self.vector)
        #expect(try codec.decode(from: &buffer) == .frame(Self.hi))
        #expect(codec.discardedByteCount == 7)
    }

    @Test func headerAnnouncing60000BytesAllocatesNothingUntilTheyArrive() throws {
        var codec = STXFrameCodec()
        var buffer = ByteBufferAllocator().buffer(capacity: 16)
        buffer.writeBytes([0x02, 0x01, 0x00, 0x02, 0x00, 0x60, 0xEA, 0x5A])
        let capacity = buffer.capacity
        let storage = buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        for _ in 0..<3 {
            #expect(try codec.decode(from: &buffer) == .needMoreData)
        }
        #expect(buffer.capacity == capacity)
        #expect(buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) } == storage)
        #expect(buffer.readerIndex == 0)
        // And the frame decodes once the bytes are there.
        let payload = [UInt8](repeating: 0x5A, count: 60_000)
        buffer.writeBytes(payload.dropFirst())
        let crc = CRC8.smbus.checksum([0x02, 0x01, 0x00, 0x02, 0x00, 0x60, 0xEA] + payload)
        buffer.writeInteger(crc)
        #expect(try codec.decode(from: &buffer) == .frame(STXFrame(destination: 1, source: 2, bytes: payload)))
    }

    @Test func truncatedFrameAtEndOfStreamThrowsWithTheLeftOverBytes() throws {
        for policy in [STXFrameCodec.Resynchronization.fail, .skipToNextStartByte] {
            var codec = STXFrameCodec(resynchronization: policy)
            let partial = Array(Self.vector.prefix(8))
            var buffer = ByteBuffer(bytes: Self.vector + partial)
            #expect(try codec.decodeLast(from: &buffer) == .frame(Self.hi))
            let error = try #require(throws: FramingError.self) { try codec.decodeLast(from: &buffer) }
            #expect(error.code == .truncatedFrame)
            #expect(error.bytes?.bytes == partial)
            #expect(buffer.bytes == partial)
            #expect(codec.discardedByteCount == 0)
        }
    }

    /// Found by FuzzSTX: skipping garbage before a cut-off frame at end of stream must not leave the buffer moved
    /// when `decodeLast` then throws.
    @Test func truncatedFrameAfterGarbageAtEndOfStreamThrowsWithNothingDiscarded() throws {
        var codec = STXFrameCodec(maxPayloadLength: 16, resynchronization: .skipToNextStartByte)
        // A start byte whose header announces too much (dropped), then a cut-off header.
        let rest: [UInt8] = [0x02, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x02, 0x01, 0x00]
        var buffer = ByteBuffer(bytes: rest)
        let error = try #require(throws: FramingError.self) { try codec.decodeLast(from: &buffer) }
        #expect(error.code == .truncatedFrame)
        #expect(error.bytes?.bytes == rest)
        #expect(buffer.readerIndex == 0)
        #expect(buffer.bytes == rest)
        #expect(codec.discardedByteCount == 0)
    }

    @Test func garbageOnlyAtEndOfStreamIsDiscardedAndEndsCleanly() throws {
        var codec = STXFrameCodec(resynchronization: .skipToNextStartByte)
        var buffer = ByteBuffer(bytes: [0x11, 0x22, 0x33])
        #expect(try codec.decodeLast(from: &buffer) == .needMoreData)
        #expect(buffer.readableBytes == 0)
        #expect(codec.discardedByteCount == 3)
    }

    @Test func truncatedHeaderAtEndOfStreamThrows() throws {
        var codec = STXFrameCodec()
        var buffer = ByteBuffer(bytes: [0x02, 0x01, 0x00])
        expectFramingError(.truncatedFrame) { try codec.decodeLast(from: &buffer) }
        #expect(buffer.readableBytes == 3)
    }

    @Test func emptyStreamEndsCleanly() throws {
        var codec = STXFrameCodec()
        var buffer = ByteBuffer()
        #expect(try codec.decodeLast(from: &buffer) == .needMoreData)
    }

    @Test func readerIndexIsUnchangedOnEveryPartialInput() throws {
        let stream = Self.vector
        for count in 0..<stream.count {
            var codec = STXFrameCodec()
            var buffer = ByteBuffer(bytes: [0xEE, 0xEE] + stream.prefix(count))
            buffer.moveReaderIndex(forwardBy: 2)
            #expect(try codec.decode(from: &buffer) == .needMoreData)
            #expect(buffer.readerIndex == 2)
            #expect(buffer.readableBytes == count)
        }
    }

    @Test func readerIndexIsUnchangedOnEveryThrow() throws {
        var badChecksum = Self.vector
        badChecksum[9] ^= 1
        let inputs: [(STXFrameCodec, [UInt8], FramingError.Code)] = [
            (STXFrameCodec(), [0x00] + Self.vector, .badStartByte),
            (STXFrameCodec(maxPayloadLength: 1), Self.vector, .frameTooLarge),
            (STXFrameCodec(), badChecksum, .checksumMismatch),
        ]
        for (codec, bytes, code) in inputs {
            var codec = codec
            var buffer = ByteBuffer(bytes: [0xEE] + bytes)
            buffer.moveReaderIndex(forwardBy: 1)
            let error = try #require(throws: FramingError.self) { try codec.decode(from: &buffer) }
            #expect(error.code == code)
            #expect(buffer.readerIndex == 1)
            #expect(buffer.bytes == bytes)
            // Throwing again gives the same answer: nothing was consumed.
            expectFramingError(code) { try codec.decode(from: &buffer) }
        }
    }

    @Test func decodeNeverReadsPastTheFrameItReturns() throws {
        var codec = STXFrameCodec()
        var buffer = ByteBuffer(bytes: Self.vector + [0x00, 0xFF])
        #expect(try codec.decode(from: &buffer) == .frame(Self.hi))
        #expect(buffer.bytes == [0x00, 0xFF])
    }

    // MARK: - Encoder refusals

    @Test func encoderRefusesAPayloadOverTheMaximumAndAppendsNothing() throws {
        let codec = STXFrameCodec(maxPayloadLength: 3)
        var out = ByteBuffer(bytes: [0xAB])
        let error = try #require(throws: FramingError.self) {
            try codec.encode(STXFrame(destination: 0, source: 0, bytes: [1, 2, 3, 4]), into: &out)
        }
        #expect(error.code == .frameTooLarge)
        #expect(out.bytes == [0xAB])
        #expect(out.writerIndex == 1)
    }

    @Test func encoderRefusesAPayloadOver65535Bytes() throws {
        let codec = STXFrameCodec()
        var out = ByteBuffer()
        expectFramingError(.frameTooLarge) {
            try codec.encode(
                STXFrame(destination: 0, source: 0, bytes: [UInt8](repeating: 0, count: 65_536)),
                into: &out
            )
        }
        #expect(out.readableBytes == 0)
    }

    @Test func encoderAppendsAfterExistingBytesAndChecksumsOnlyTheFrame() throws {
        let codec = STXFrameCodec()
        var out = ByteBuffer(bytes: [0x99, 0x98, 0x97])
        out.moveReaderIndex(forwardBy: 1)
        try codec.encode(Self.hi, into: &out)
        #expect(out.bytes == [0x98, 0x97] + Self.vector)
    }
}
