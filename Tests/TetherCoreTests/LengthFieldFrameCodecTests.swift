import NIOCore
import Testing
import TetherCore

struct LengthFieldFrameCodecTests {
    typealias FieldLength = LengthFieldFrameCodec.FieldLength

    private static func decodeOne(
        _ bytes: [UInt8],
        _ codec: LengthFieldFrameCodec
    ) throws -> (FrameDecodingResult<ByteBuffer>, ByteBuffer) {
        var codec = codec
        var buffer = ByteBuffer(bytes: bytes)
        let result = try codec.decode(from: &buffer)
        return (result, buffer)
    }

    @Test func defaultsAreAFourByteBigEndianField() throws {
        let codec = LengthFieldFrameCodec()
        #expect(codec.fieldLength == .four)
        #expect(codec.endianness == .big)
        #expect(codec.lengthAdjustment == 0)
        #expect(codec.maxFrameLength == 8_388_608)
        #expect(try codec.encode(ByteBuffer(string: "hi")).bytes == [0, 0, 0, 2, 0x68, 0x69])
        #expect(FieldLength.allCases.map(\.rawValue) == [1, 2, 4, 8])
    }

    @Test(arguments: FieldLength.allCases, [Endianness.big, .little])
    func everyFieldWidthAndByteOrderRoundTrips(fieldLength: FieldLength, endianness: Endianness) throws {
        let codec = LengthFieldFrameCodec(fieldLength: fieldLength, endianness: endianness)
        let payload = ByteBuffer(bytes: Array(0..<200) as [UInt8])
        let bytes = try codec.encode(payload).bytes
        var field = [UInt8](repeating: 0, count: fieldLength.rawValue)
        field[endianness == .big ? fieldLength.rawValue - 1 : 0] = 200
        #expect(Array(bytes.prefix(fieldLength.rawValue)) == field)
        #expect(bytes.count == fieldLength.rawValue + 200)
        let (result, rest) = try Self.decodeOne(bytes + [0x77], codec)
        #expect(result == .frame(payload))
        #expect(rest.bytes == [0x77])
    }

    @Test func multiByteFieldsUseTheConfiguredByteOrder() throws {
        let big = LengthFieldFrameCodec(fieldLength: .two, endianness: .big)
        let little = LengthFieldFrameCodec(fieldLength: .two, endianness: .little)
        let payload = ByteBuffer(bytes: [UInt8](repeating: 1, count: 0x0102))
        #expect(Array(try big.encode(payload).bytes.prefix(2)) == [0x01, 0x02])
        #expect(Array(try little.encode(payload).bytes.prefix(2)) == [0x02, 0x01])
    }

    @Test func lengthAdjustmentIsAddedOnDecodeAndSubtractedOnEncode() throws {
        // A field that counts itself (2 bytes) as well as the payload.
        let codec = LengthFieldFrameCodec(fieldLength: .two, lengthAdjustment: -2)
        let bytes = try codec.encode(ByteBuffer(string: "abc")).bytes
        #expect(bytes == [0x00, 0x05, 0x61, 0x62, 0x63])
        #expect(try Self.decodeOne(bytes, codec).0 == .frame(ByteBuffer(string: "abc")))
        // A positive adjustment: the field counts the payload minus 1.
        let plus = LengthFieldFrameCodec(fieldLength: .one, lengthAdjustment: 1)
        #expect(try plus.encode(ByteBuffer(string: "abc")).bytes == [0x02, 0x61, 0x62, 0x63])
        #expect(try Self.decodeOne([0x02, 0x61, 0x62, 0x63], plus).0 == .frame(ByteBuffer(string: "abc")))
    }

    @Test func zeroLengthPayload() throws {
        let codec = LengthFieldFrameCodec(fieldLength: .two)
        #expect(try codec.encode(ByteBuffer()).bytes == [0, 0])
        let (result, rest) = try Self.decodeOne([0, 0, 0xAA], codec)
        #expect(result == .frame(ByteBuffer()))
        #expect(rest.bytes == [0xAA])
    }

    @Test func maximumLengthPayloadIsAcceptedAndOneMoreIsRefused() throws {
        let codec = LengthFieldFrameCodec(fieldLength: .two, maxFrameLength: 300)
        let max = ByteBuffer(bytes: [UInt8](repeating: 3, count: 300))
        #expect(try Self.decodeOne(try codec.encode(max).bytes, codec).0 == .frame(max))
        let header: [UInt8] = [0x01, 0x2D]  // 301
        let (result, _) = try Self.decodeOne([0x01, 0x2C], codec)  // 300: waits for the payload
        #expect(result == .needMoreData)
        let error = try #require(throws: FramingError.self) { try Self.decodeOne(header, codec) }
        #expect(error.code == .frameTooLarge)
        #expect(error.bytes?.bytes == header)
    }

    @Test func oneByteFieldCarriesUpTo255() throws {
        let codec = LengthFieldFrameCodec(fieldLength: .one)
        let max = ByteBuffer(bytes: [UInt8](repeating: 9, count: 255))
        #expect(try Self.decodeOne(try codec.encode(max).bytes, codec).0 == .frame(max))
        var out = ByteBuffer(bytes: [0x42])
        expectFramingError(.frameTooLarge) {
            try codec.encode(ByteBuffer(bytes: [UInt8](repeating: 9, count: 256)), into: &out)
        }
        #expect(out.bytes == [0x42])
    }

    @Test func hugeLengthFailsAtOnceBeforeAnyPayload() throws {
        // An 8-byte field announcing 2^40 bytes: refused as soon as the field is complete.
        let codec = LengthFieldFrameCodec(fieldLength: .eight)
        let field: [UInt8] = [0, 0, 1, 0, 0, 0, 0, 0]
        var buffer = ByteBuffer(bytes: field)
        var decoder = codec
        let error = try #require(throws: FramingError.self) { try decoder.decode(from: &buffer) }
        #expect(error.code == .frameTooLarge)
        #expect(buffer.readerIndex == 0)
        #expect(buffer.bytes == field)
        var seven = ByteBuffer(bytes: field.prefix(7))
        #expect(try decoder.decode(from: &seven) == .needMoreData)
    }

    @Test func headerAnnouncing60000BytesAllocatesNothingUntilTheyArrive() throws {
        var codec = LengthFieldFrameCodec(fieldLength: .two)
        var buffer = ByteBufferAllocator().buffer(capacity: 8)
        buffer.writeBytes([0xEA, 0x60, 0x01])
        let capacity = buffer.capacity
        let storage = buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(try codec.decode(from: &buffer) == .needMoreData)
        #expect(buffer.capacity == capacity)
        #expect(buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) } == storage)
        #expect(buffer.readerIndex == 0)
    }

    @Test func fieldValueThatDoesNotFitIntIsAnInvalidLength() throws {
        let codec = LengthFieldFrameCodec(fieldLength: .eight, maxFrameLength: .max)
        let field: [UInt8] = [0x80, 0, 0, 0, 0, 0, 0, 0]
        let error = try #require(throws: FramingError.self) { try Self.decodeOne(field, codec) }
        #expect(error.code == .invalidLength)
        #expect(error.bytes?.bytes == field)
    }

    @Test func negativeLengthAfterAdjustmentIsAnInvalidLength() throws {
        let codec = LengthFieldFrameCodec(fieldLength: .two, lengthAdjustment: -2)
        expectFramingError(.invalidLength) { try Self.decodeOne([0x00, 0x01], codec) }
        #expect(try Self.decodeOne([0x00, 0x02], codec).0 == .frame(ByteBuffer()))
    }

    @Test func adjustmentOverflowIsAnInvalidLength() throws {
        let codec = LengthFieldFrameCodec(fieldLength: .eight, lengthAdjustment: .max, maxFrameLength: .max)
        expectFramingError(.invalidLength) { try Self.decodeOne([0, 0, 0, 0, 0, 0, 0, 1], codec) }
    }

    @Test func truncatedFrameAtEndOfStreamThrows() throws {
        var codec = LengthFieldFrameCodec(fieldLength: .two)
        var buffer = ByteBuffer(bytes: [0x00, 0x01, 0x41, 0x00, 0x05, 0x42])
        #expect(try codec.decodeLast(from: &buffer) == .frame(ByteBuffer(string: "A")))
        let error = try #require(throws: FramingError.self) { try codec.decodeLast(from: &buffer) }
        #expect(error.code == .truncatedFrame)
        #expect(error.bytes?.bytes == [0x00, 0x05, 0x42])
        #expect(buffer.bytes == [0x00, 0x05, 0x42])
    }

    @Test func readerIndexIsUnchangedOnPartialInputAndOnThrow() throws {
        let codec = LengthFieldFrameCodec(fieldLength: .four, maxFrameLength: 10)
        let frame: [UInt8] = [0, 0, 0, 3, 1, 2, 3]
        for count in 0..<frame.count {
            var decoder = codec
            var buffer = ByteBuffer(bytes: [0xFF] + frame.prefix(count))
            buffer.moveReaderIndex(forwardBy: 1)
            #expect(try decoder.decode(from: &buffer) == .needMoreData)
            #expect(buffer.readerIndex == 1)
        }
        var decoder = codec
        var buffer = ByteBuffer(bytes: [0xFF, 0, 0, 0, 11, 1])
        buffer.moveReaderIndex(forwardBy: 1)
        expectFramingError(.frameTooLarge) { try decoder.decode(from: &buffer) }
        #expect(buffer.readerIndex == 1)
        #expect(buffer.bytes == [0, 0, 0, 11, 1])
    }

    @Test func encoderRefusesWhatTheDecoderRefusesAndAppendsNothing() throws {
        var out = ByteBuffer(bytes: [0x01, 0x02])
        let before = out
        // Over maxFrameLength.
        expectFramingError(.frameTooLarge) {
            try LengthFieldFrameCodec(maxFrameLength: 2).encode(ByteBuffer(string: "abc"), into: &out)
        }
        // Field value would not fit the field.
        expectFramingError(.frameTooLarge) {
            try LengthFieldFrameCodec(fieldLength: .two).encode(
                ByteBuffer(bytes: [UInt8](repeating: 0, count: 65_536)),
                into: &out
            )
        }
        expectFramingError(.frameTooLarge) {
            try LengthFieldFrameCodec(fieldLength: .one, lengthAdjustment: -1).encode(
                ByteBuffer(bytes: [UInt8](repeating: 0, count: 255)),
                into: &out
            )
        }
        // Field value would be negative.
        expectFramingError(.invalidLength) {
            try LengthFieldFrameCodec(fieldLength: .two, lengthAdjustment: 5).encode(
                ByteBuffer(string: "abc"),
                into: &out
            )
        }
        // Field value would overflow Int.
        expectFramingError(.frameTooLarge) {
            try LengthFieldFrameCodec(fieldLength: .eight, lengthAdjustment: .min).encode(ByteBuffer(), into: &out)
        }
        #expect(out == before)
        #expect(out.writerIndex == 2)
    }
}
