import NIOCore
import NIOEmbedded
import Testing
import TetherCore

/// `FrameDecoder.decode` decodes every whole frame of the buffer in one call; these tests pin what that means for
/// each codec path, for errors, and for a handler that removes the decoder or closes the channel mid-read.
struct FrameDecoderBatchTests {
    private static let vector: [UInt8] = [0x02, 0x01, 0x00, 0x02, 0x00, 0x02, 0x00, 0x68, 0x69, 0xDA]
    private static let hi = STXFrame(destination: 1, source: 2, bytes: "hi".utf8)

    /// Records what reaches the end of the pipeline, and can act on the first frame.
    private final class Recorder: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer

        var events: [String] = []
        var onFirstFrame: ((ChannelHandlerContext) -> Void)?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.events.append(String(buffer: Self.unwrapInboundIn(data)))
            if let act = self.onFirstFrame {
                self.onFirstFrame = nil
                act(context)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.events.append("inactive")
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.events.append("error \((error as? FramingError)?.code.description ?? "\(error)")")
        }
    }

    /// Calls `decode` once, by hand, with a context in an embedded pipeline; returns what it fired.
    private static func decodeOnce<Codec: FrameCodec>(
        _ codec: Codec,
        _ bytes: [UInt8],
        as frame: Codec.Frame.Type
    ) throws -> (state: DecodingState, left: ByteBuffer, frames: [Codec.Frame]) {
        let channel = EmbeddedChannel()
        let handler = ByteToMessageHandler(FrameDecoder(codec))
        try channel.pipeline.syncOperations.addHandler(handler)
        let context = try channel.pipeline.syncOperations.context(handler: handler)
        var decoder = FrameDecoder(codec)
        var buffer = ByteBuffer(bytes: bytes)
        let state = try decoder.decode(context: context, buffer: &buffer)
        var frames: [Codec.Frame] = []
        while let frame = try channel.readInbound(as: frame) {
            frames.append(frame)
        }
        _ = try? channel.finish()
        return (state, buffer, frames)
    }

    @Test func oneCallDecodesEveryWholeFrameOfEachBuiltInCodec() throws {
        let stx = try Self.decodeOnce(STXFrameCodec(), Self.vector + Self.vector + [0x02, 0x01], as: STXFrame.self)
        #expect(stx.state == .needMoreData)
        #expect(stx.frames == [Self.hi, Self.hi])
        #expect(stx.left == ByteBuffer(bytes: [0x02, 0x01]))

        let length = try Self.decodeOnce(
            LengthFieldFrameCodec(fieldLength: .one),
            [1, 0x41, 0, 2, 0x42, 0x43, 3, 0x44],
            as: ByteBuffer.self
        )
        #expect(length.state == .needMoreData)
        #expect(length.frames == ["A", "", "BC"].map { ByteBuffer(string: $0) })
        #expect(length.left == ByteBuffer(bytes: [3, 0x44]))

        let lines = try Self.decodeOnce(DelimiterFrameCodec(), Array("a\nbb\n\nhalf".utf8), as: ByteBuffer.self)
        #expect(lines.state == .needMoreData)
        #expect(lines.frames == ["a", "bb", ""].map { ByteBuffer(string: $0) })
        #expect(lines.left == ByteBuffer(string: "half"))
    }

    @Test func oneCallDecodesEveryWholeFrameOfAUserCodec() throws {
        let pairs = try Self.decodeOnce(PairCodec(), [1, 2, 3, 4, 5, 6, 7], as: [UInt8].self)
        #expect(pairs.state == .needMoreData)
        #expect(pairs.frames == [[1, 2], [3, 4], [5, 6]])
        #expect(pairs.left == ByteBuffer(bytes: [7]))
    }

    @Test func aBadFrameAfterGoodOnesFiresTheGoodOnesThenTheErrorAndKeepsTheBadBytes() throws {
        var bad = Self.vector
        bad[9] = 0x00
        let direct = try Self.decodeOnceThrowing(Self.vector + Self.vector + bad)
        #expect(direct.frames == [Self.hi, Self.hi])
        #expect(direct.error?.code == .checksumMismatch)
        #expect(direct.left == ByteBuffer(bytes: bad))
    }

    /// Like `decodeOnce`, for a call that throws after firing frames.
    private static func decodeOnceThrowing(
        _ bytes: [UInt8]
    ) throws -> (frames: [STXFrame], error: FramingError?, left: ByteBuffer) {
        let channel = EmbeddedChannel()
        let handler = ByteToMessageHandler(FrameDecoder(STXFrameCodec()))
        try channel.pipeline.syncOperations.addHandler(handler)
        let context = try channel.pipeline.syncOperations.context(handler: handler)
        var decoder = FrameDecoder(STXFrameCodec())
        var buffer = ByteBuffer(bytes: bytes)
        var thrown: FramingError?
        do {
            _ = try decoder.decode(context: context, buffer: &buffer)
        } catch let error as FramingError {
            thrown = error
        }
        var frames: [STXFrame] = []
        while let frame = try channel.readInbound(as: STXFrame.self) {
            frames.append(frame)
        }
        _ = try? channel.finish()
        return (frames, thrown, buffer)
    }

    @Test func removingTheDecoderOnAFrameStillDeliversTheBufferedFramesThenTheCutOneAsTruncated() throws {
        let channel = EmbeddedChannel()
        let decoder = ByteToMessageHandler(FrameDecoder(LengthFieldFrameCodec(fieldLength: .one)))
        let recorder = Recorder()
        try channel.pipeline.syncOperations.addHandlers(decoder, recorder)
        var removed: EventLoopFuture<Void>?
        recorder.onFirstFrame = { context in
            removed = context.pipeline.syncOperations.removeHandler(decoder)
        }
        try channel.writeInbound(ByteBuffer(bytes: [1, 0x41, 1, 0x42, 1, 0x43, 2, 0x44]))
        // The frames already buffered arrive in the read that carried them, before the removal completes.
        #expect(recorder.events == ["A", "B", "C"])
        let removal = try #require(removed)
        var removalDone = false
        removal.assumeIsolated().whenSuccess { removalDone = true }
        #expect(!removalDone)
        channel.embeddedEventLoop.run()
        #expect(removalDone)
        // The partial frame is treated as the end of the stream, as NIO does for any decoder being removed.
        #expect(recorder.events == ["A", "B", "C", "error truncatedFrame"])
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.context(handler: decoder) }
        // Bytes after the removal pass the pipeline undecoded.
        try channel.writeInbound(ByteBuffer(string: "raw"))
        #expect(recorder.events.last == "raw")
        _ = try? channel.finish()
    }

    @Test func closingTheChannelOnAFrameLosesNoBufferedFrame() throws {
        let channel = EmbeddedChannel()
        let recorder = Recorder()
        try channel.pipeline.syncOperations.addHandlers(
            ByteToMessageHandler(FrameDecoder(DelimiterFrameCodec())),
            recorder
        )
        recorder.onFirstFrame = { context in
            context.close(promise: nil)
        }
        try channel.writeInbound(ByteBuffer(string: "one\ntwo\nthree\n"))
        // NIO fires the inactive event from inside the first frame's delivery; the decoder then finishes the read.
        #expect(recorder.events == ["one", "inactive", "two", "three"])
    }
}
