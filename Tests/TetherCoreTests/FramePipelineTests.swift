import NIOCore
import NIOEmbedded
import Testing
import TetherCore

struct FramePipelineTests {
    private static let vector: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA]
    private static let hi = STXFrame(destination: 1, source: 2, bytes: "hi".utf8)

    private static func makeChannel<Codec: FrameCodec>(_ codec: Codec) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(codec)))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder(codec)))
        return channel
    }

    @Test func frameDecoderFiresOneReadPerFrameWhenDripFed() throws {
        let channel = try Self.makeChannel(STXFrameCodec())
        for byte in Self.vector + Self.vector {
            try channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        #expect(try channel.readInbound(as: STXFrame.self) == Self.hi)
        #expect(try channel.readInbound(as: STXFrame.self) == Self.hi)
        #expect(try channel.readInbound(as: STXFrame.self) == nil)
        #expect(try channel.finish().isClean)
    }

    @Test func frameDecoderDecodesSeveralFramesFromOneRead() throws {
        let channel = try Self.makeChannel(LengthFieldFrameCodec(fieldLength: .one))
        try channel.writeInbound(ByteBuffer(bytes: [1, 0x41, 2, 0x42, 0x43, 0]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "A"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "BC"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer())
        #expect(try channel.finish().isClean)
    }

    @Test func framingErrorIsFiredDownThePipeline() throws {
        let channel = try Self.makeChannel(STXFrameCodec())
        var bad = Self.vector
        bad[9] = 0x00
        let error = try #require(throws: FramingError.self) { try channel.writeInbound(ByteBuffer(bytes: bad)) }
        #expect(error.code == .checksumMismatch)
        #expect(error.bytes?.bytes == bad)
        _ = try? channel.finish()
    }

    @Test func bytesLeftAtEndOfStreamAreATruncatedFrame() throws {
        let channel = try Self.makeChannel(DelimiterFrameCodec())
        try channel.writeInbound(ByteBuffer(string: "line\nhalf"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "line"))
        let error = try #require(throws: FramingError.self) { try channel.finish() }
        #expect(error.code == .truncatedFrame)
        #expect(error.bytes == ByteBuffer(string: "half"))
    }

    @Test func frameEncoderWritesTheWireBytes() throws {
        let channel = try Self.makeChannel(STXFrameCodec())
        try channel.writeOutbound(Self.hi)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: Self.vector))
        #expect(try channel.finish().isClean)
    }

    @Test func frameEncoderFailsTheWriteAndWritesNothingForARefusedFrame() async throws {
        let channel = try Self.makeChannel(DelimiterFrameCodec())
        await #expect(throws: FramingError.self) {
            try await channel.writeAndFlush(ByteBuffer(string: "two\nlines"))
        }
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        _ = try? channel.finish()
    }

    @Test func userWrittenCodecWorksInThePipeline() throws {
        let channel = try Self.makeChannel(PairCodec())
        try channel.writeInbound(ByteBuffer(bytes: [1, 2, 3]))
        try channel.writeInbound(ByteBuffer(bytes: [4]))
        #expect(try channel.readInbound(as: [UInt8].self) == [1, 2])
        #expect(try channel.readInbound(as: [UInt8].self) == [3, 4])
        try channel.writeOutbound([5, 6] as [UInt8])
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [5, 6]))
        #expect(try channel.finish().isClean)
    }

    @Test func codecStateSurvivesBetweenReadsInThePipeline() throws {
        // The skip policy's resynchronisation and the delimiter codec's search offset live in the handler's codec.
        let stx = try Self.makeChannel(STXFrameCodec(resynchronization: .skipToNextStartByte))
        for byte in [0xAA, 0xBB] + Self.vector + [0xCC] + Self.vector {
            try stx.writeInbound(ByteBuffer(bytes: [byte]))
        }
        #expect(try stx.readInbound(as: STXFrame.self) == Self.hi)
        #expect(try stx.readInbound(as: STXFrame.self) == Self.hi)
        #expect(try stx.finish().isClean)

        let lines = try Self.makeChannel(DelimiterFrameCodec(delimiter: .crlf))
        for byte in Array("first\r\nsecond\r\n".utf8) {
            try lines.writeInbound(ByteBuffer(bytes: [byte]))
        }
        #expect(try lines.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "first"))
        #expect(try lines.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "second"))
        #expect(try lines.finish().isClean)
    }

    @Test func frameDecoderKeepsItsCodec() {
        let decoder = FrameDecoder(STXFrameCodec(startByte: 0x7E))
        #expect(decoder.codec.startByte == 0x7E)
        let encoder = FrameEncoder(LengthFieldFrameCodec(fieldLength: .two))
        #expect(encoder.codec.fieldLength == .two)
    }
}
