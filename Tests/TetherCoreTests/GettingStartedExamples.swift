import NIOCore
import NIOPosix
import Testing
import TetherCore
import TetherTestSupport

// The code of the article "Getting started" (TetherCore/Docs.docc/GettingStarted.md). Each Swift block of the
// article appears here line for line (`everySwiftBlockOfTheArticleIsCodeOfThisFile` checks it); the tests below run
// them.

// MARK: - Decode and encode an STX frame

func decodeTheSeedsFrame() throws -> STXFrame? {
    var codec = STXFrameCodec()  // 0x02, little-endian, CRC-8/SMBUS, payloads up to 65 535 bytes
    var buffer = ByteBuffer(bytes: [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA])
    guard case .frame(let frame) = try codec.decode(from: &buffer) else { return nil }
    // frame.destination == 1, frame.source == 2, String(buffer: frame.payload) == "hi"
    return frame
}

func encodeAFrame() throws -> ByteBuffer {
    let codec = STXFrameCodec()
    return try codec.encode(STXFrame(destination: 1, source: 2, bytes: "hi".utf8))  // 02 01 00 02 00 02 00 68 69 DA
}

func encodeABatch(_ frames: [STXFrame]) throws -> ByteBuffer {
    let codec = STXFrameCodec()
    var wire = ByteBuffer()
    for frame in frames {
        try codec.encode(frame, into: &wire)  // a frame it refuses appends nothing
    }
    return wire
}

// MARK: - Read frames from chunks

func decodeFrames(_ chunks: [[UInt8]]) throws -> [STXFrame] {
    var codec = STXFrameCodec()
    var received = ByteBuffer()
    var frames: [STXFrame] = []
    for chunk in chunks {
        received.writeBytes(chunk)
        while case .frame(let frame) = try codec.decode(from: &received) {
            frames.append(frame)
        }
    }
    // The stream ended: a frame cut off by the end throws .truncatedFrame.
    while case .frame(let frame) = try codec.decodeLast(from: &received) {
        frames.append(frame)
    }
    return frames
}

// MARK: - Length-prefixed and delimited frames

func lengthPrefixedFrames() throws -> (wire: ByteBuffer, payload: String?) {
    var codec = LengthFieldFrameCodec(fieldLength: .two)  // 2-byte big-endian field, 8 MiB maximum
    var wire = try codec.encode(ByteBuffer(string: "hi"))  // 00 02 68 69
    let encoded = wire
    guard case .frame(let payload) = try codec.decode(from: &wire) else { return (encoded, nil) }
    return (encoded, String(buffer: payload))  // "hi"
}

func aFieldThatCountsItself() throws -> ByteBuffer {
    // The field's value is the payload's length plus the field's own 2 bytes.
    let codec = LengthFieldFrameCodec(fieldLength: .two, lengthAdjustment: -2)
    return try codec.encode(ByteBuffer(string: "hi"))  // 00 04 68 69
}

func commandLines(_ text: String) throws -> [String] {
    var codec = DelimiterFrameCodec(delimiter: .crlf, maxLength: 512)
    var buffer = ByteBuffer(string: text)
    var lines: [String] = []
    while case .frame(let line) = try codec.decode(from: &buffer) {
        lines.append(String(buffer: line))  // "HELO", "QUIT": the delimiter is stripped
    }
    return lines
}

// MARK: - Errors

func describe(_ bytes: [UInt8]) -> String {
    var codec = STXFrameCodec()
    var buffer = ByteBuffer(bytes: bytes)
    do {
        switch try codec.decode(from: &buffer) {
        case .frame(let frame): return "frame for \(frame.destination)"
        case .needMoreData: return "incomplete"
        }
    } catch FramingError.Code.checksumMismatch {
        return "corrupt frame, \(buffer.readableBytes) bytes kept"
    } catch FramingError.Code.badStartByte {
        return "not at a frame boundary"
    } catch {
        return "\(error)"
    }
}

// MARK: - Resynchronisation

func framesSkippingGarbage(_ bytes: [UInt8]) throws -> (frames: [STXFrame], discarded: Int) {
    var codec = STXFrameCodec(maxPayloadLength: 256, resynchronization: .skipToNextStartByte)
    var buffer = ByteBuffer(bytes: bytes)
    var frames: [STXFrame] = []
    while case .frame(let frame) = try codec.decodeLast(from: &buffer) {
        frames.append(frame)
    }
    return (frames, codec.discardedByteCount)
}

// MARK: - Checksums and other STX variants

func stxVariants() -> [STXFrameCodec] {
    [
        STXFrameCodec(checksum: .none),  // 0x02 | dest | src | len | data
        STXFrameCodec(checksum: .xor8),
        STXFrameCodec(checksum: .crc8(CRC8(polynomial: 0x1D, initialValue: 0xFF, finalXOR: 0xFF))),
        STXFrameCodec(startByte: 0x7E, endianness: .big),
    ]
}

func checkValue() -> UInt8 {
    CRC8.smbus.checksum("123456789".utf8)  // 0xF4, the CRC-8/SMBUS check value
}

// MARK: - In a NIO pipeline

final class FrameResponder: ChannelInboundHandler {
    typealias InboundIn = STXFrame
    typealias OutboundOut = STXFrame

    let address: UInt16

    init(address: UInt16) {
        self.address = address
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        guard frame.destination == address else { return }  // not for us
        let reply = STXFrame(destination: frame.source, source: address, payload: frame.payload)
        context.writeAndFlush(Self.wrapOutboundOut(reply), promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A FramingError from the decoder: the stream is out of step, and the decoder takes no more bytes.
        context.close(promise: nil)
    }
}

func addSTXFraming(to channel: any Channel, address: UInt16) throws {
    try channel.pipeline.syncOperations.addHandlers(
        ByteToMessageHandler(FrameDecoder(STXFrameCodec())),
        MessageToByteHandler(FrameEncoder(STXFrameCodec())),
        FrameResponder(address: address)
    )
}

func startResponder(address: UInt16, group: any EventLoopGroup) async throws -> any Channel {
    try await ServerBootstrap(group: group)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try addSTXFraming(to: channel, address: address)
            }
        }
        .bind(host: "127.0.0.1", port: 0)
        .get()
}

// MARK: - Test support

/// A client end of the pipeline test: STX framing, and every frame it receives fulfils the next promise.
private final class FrameCollector: ChannelInboundHandler {
    typealias InboundIn = STXFrame

    private var promises: [EventLoopPromise<STXFrame>]

    init(promises: [EventLoopPromise<STXFrame>]) {
        self.promises = promises
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !promises.isEmpty else { return }
        promises.removeFirst().succeed(Self.unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        for promise in promises { promise.fail(ChannelError.eof) }
        promises = []
    }
}

private let seedVector: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA]

// MARK: - Tests

@Suite("The article \"Getting started\" of TetherCore: its code compiles and runs", .timeLimit(.minutes(1)))
struct GettingStartedExamples {
    @Test("every Swift block of the article is code of this file, line for line")
    func everySwiftBlockOfTheArticleIsCodeOfThisFile() throws {
        let article = "Sources/TetherCore/Docs.docc/GettingStarted.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 9)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherCoreTests/GettingStartedExamples.swift"]
        )
        #expect(missing.isEmpty, "not in GettingStartedExamples.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test("the seed's frame decodes to dest 1, src 2, \"hi\" and encodes back to the same ten bytes")
    func theSeedsFrameDecodesAndEncodes() throws {
        let frame = try #require(try decodeTheSeedsFrame())
        #expect(frame.destination == 1 && frame.source == 2 && String(buffer: frame.payload) == "hi")
        #expect(Array(try encodeAFrame().readableBytesView) == seedVector)
        let batch = try encodeABatch([frame, STXFrame(destination: 3, source: 4, bytes: [])])
        #expect(batch.readableBytes == seedVector.count + STXFrameCodec.headerLength + 1)
    }

    @Test("frames come out whole from one-byte chunks, and a cut-off last frame is truncatedFrame")
    func chunkedStreamsDecodeTheSameFrames() throws {
        let two = seedVector + seedVector
        #expect(try decodeFrames(two.map { [$0] }).count == 2)
        #expect(try decodeFrames([Array(two[..<3]), Array(two[3..<13]), Array(two[13...])]).count == 2)
        let error = try #require(throws: FramingError.self) { try decodeFrames([seedVector + seedVector.prefix(4)]) }
        #expect(error.code == .truncatedFrame)
    }

    @Test("length-field and delimiter codecs give the bytes and frames the article shows")
    func lengthFieldAndDelimiterFrames() throws {
        let (wire, payload) = try lengthPrefixedFrames()
        #expect(Array(wire.readableBytesView) == [0x00, 0x02, 0x68, 0x69])
        #expect(payload == "hi")
        #expect(Array(try aFieldThatCountsItself().readableBytesView) == [0x00, 0x04, 0x68, 0x69])
        #expect(try commandLines("HELO\r\nQUIT\r\npartial") == ["HELO", "QUIT"])
    }

    @Test("describe tells a frame, a partial frame, a corrupt frame and a bad start byte apart")
    func errorsAreMatchedByCode() {
        var corrupt = seedVector
        corrupt[9] = 0x00
        #expect(describe(seedVector) == "frame for 1")
        #expect(describe(Array(seedVector.prefix(6))) == "incomplete")
        #expect(describe(corrupt) == "corrupt frame, 10 bytes kept")
        #expect(describe([0x41] + seedVector) == "not at a frame boundary")
    }

    @Test("skipping garbage and a damaged frame keeps the good frame and counts 13 discarded bytes")
    func resynchronisationSkipsAndCounts() throws {
        var corrupt = seedVector
        corrupt[9] = 0x00
        let (frames, discarded) = try framesSkippingGarbage([0xFF, 0x00, 0x41] + corrupt + seedVector)
        #expect(frames == [STXFrame(destination: 1, source: 2, bytes: "hi".utf8)])
        #expect(discarded == 13)
    }

    @Test("each STX variant round-trips a frame, and CRC-8/SMBUS's check value is 0xF4")
    func variantsRoundTrip() throws {
        let frame = STXFrame(destination: 0x0102, source: 0x0304, bytes: "payload".utf8)
        for var codec in stxVariants() {
            var wire = try codec.encode(frame)
            #expect(try codec.decode(from: &wire) == .frame(frame))
        }
        #expect(try stxVariants()[0].encode(frame).readableBytes == STXFrameCodec.headerLength + 7)
        #expect(try stxVariants()[3].encode(frame).getInteger(at: 0, as: UInt8.self) == 0x7E)
        #expect(checkValue() == 0xF4)
    }

    @Test("a responder in a real pipeline on loopback answers the frame addressed to it and ignores the other")
    func theResponderAnswersOverLoopback() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let server = try await startResponder(address: 1, group: group)
        let port = try #require(server.localAddress?.port)
        let loop = group.next()
        let reply = loop.makePromise(of: STXFrame.self)
        let client = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(FrameDecoder(STXFrameCodec())),
                        MessageToByteHandler(FrameEncoder(STXFrameCodec())),
                        FrameCollector(promises: [reply])
                    )
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        // The frame for address 9 is ignored; the one for address 1 comes back with the addresses swapped.
        client.write(STXFrame(destination: 9, source: 2, bytes: "skip".utf8), promise: nil)
        try await client.writeAndFlush(STXFrame(destination: 1, source: 2, bytes: "hi".utf8))
        let answer = try await reply.futureResult.get()
        #expect(answer == STXFrame(destination: 2, source: 1, bytes: "hi".utf8))
        try await client.close()
        try await server.close()
    }
}
