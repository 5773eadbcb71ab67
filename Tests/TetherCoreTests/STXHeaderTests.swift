import Foundation
import NIOCore
import Testing
import TetherCore

@Suite("STXFrameCodec.bodyLength(forHeader:): the seed's header-then-body reads, checked")
struct STXHeaderTests {
    /// The header of the seed's example frame (destination 1, source 2, payload "hi").
    static let header: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00]

    @Test("the body is the announced payload and the checksum, from any collection of bytes")
    func bodyIsPayloadAndChecksum() throws {
        let codec = STXFrameCodec()
        #expect(try codec.bodyLength(forHeader: Self.header) == 3)
        #expect(try codec.bodyLength(forHeader: Data(Self.header)) == 3)
        #expect(try codec.bodyLength(forHeader: ByteBuffer(bytes: Self.header).readableBytesView) == 3)
        // A slice of a larger Data (its indices do not start at 0).
        let received = Data([0xFF] + Self.header)
        #expect(try codec.bodyLength(forHeader: received.dropFirst()) == 3)
    }

    @Test("header then body, read separately, decode to the frame the codec encoded")
    func headerThenBodyDecodes() throws {
        var codec = STXFrameCodec()
        let frame = STXFrame(destination: 7, source: 9, bytes: Array(repeating: 0x41, count: 300))
        let wire = try codec.encode(frame).readableBytesView
        let header = wire.prefix(STXFrameCodec.headerLength)
        let body = try codec.bodyLength(forHeader: header)
        #expect(body == 301)
        #expect(wire.count == STXFrameCodec.headerLength + body)
        var buffer = ByteBuffer(bytes: wire)
        #expect(try codec.decode(from: &buffer) == .frame(frame))
    }

    @Test("byte order and checksum of the codec count: big-endian lengths, no checksum")
    func configurationCounts() throws {
        let big = STXFrameCodec(endianness: .big, checksum: .none)
        // Length field 01 02: 0x0102 = 258 big-endian, no checksum byte.
        #expect(try big.bodyLength(forHeader: [0x02, 0, 0, 0, 0, 0x01, 0x02]) == 258)
        #expect(try STXFrameCodec().bodyLength(forHeader: [0x02, 0, 0, 0, 0, 0x01, 0x02]) == 0x0201 + 1)
    }

    @Test(
        "a header that cannot be believed throws a typed error with the header attached",
        arguments: [
            ([0x02, 0x01, 0x00], FramingError.Code.invalidLength),
            ([0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68], .invalidLength),
            ([0x41, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00], .badStartByte),
            ([0x02, 0x01, 0x00, 0x02, 0x00, 0x01, 0x01], .frameTooLarge),
        ] as [([UInt8], FramingError.Code)]
    )
    func unbelievableHeaders(header: [UInt8], code: FramingError.Code) throws {
        let codec = STXFrameCodec(maxPayloadLength: 256)
        let error = try #require(throws: FramingError.self) { try codec.bodyLength(forHeader: header) }
        #expect(error.code == code)
        #expect(error.bytes.map { Array($0.readableBytesView) } == header)
    }

    @Test("the limit is inclusive: a header announcing exactly maxPayloadLength is believed")
    func limitIsInclusive() throws {
        let codec = STXFrameCodec(maxPayloadLength: 256)
        #expect(try codec.bodyLength(forHeader: [0x02, 0, 0, 0, 0, 0x00, 0x01]) == 257)
    }
}
