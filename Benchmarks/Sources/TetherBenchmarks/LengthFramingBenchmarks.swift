import NIOCore
import NIOPosix
import TetherCore
import TetherSockets

/// Frames of `length (2 bytes, big endian) | payload`, decoded four ways: Tether's `frames(…)` and `FrameDecoder`
/// with `LengthFieldFrameCodec(fieldLength: .two)`, and NIO's `NIOAsyncChannel` and a pipeline over a hand-written
/// `ByteToMessageDecoder`. The server writes the whole stream as fast as it can.
enum LengthFramingBenchmarks {
    static let codec = LengthFieldFrameCodec(fieldLength: .two)

    /// `count` frames with `payloadLength`-byte payloads, back to back.
    static func wire(count: Int, payloadLength: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count * (2 + payloadLength))
        var payload = ByteBuffer()
        for index in 0..<count {
            payload.clear()
            payload.writeRepeatingByte(UInt8(truncatingIfNeeded: index), count: payloadLength)
            try! codec.encode(payload, into: &buffer)
        }
        return buffer
    }

    /// What a NIO user writes by hand for this format.
    struct HandWrittenLengthDecoder: ByteToMessageDecoder {
        typealias InboundOut = ByteBuffer

        mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
            guard let length = buffer.getInteger(at: buffer.readerIndex, endianness: .big, as: UInt16.self),
                buffer.readableBytes >= 2 + Int(length)
            else { return .needMoreData }
            buffer.moveReaderIndex(forwardBy: 2)
            context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: Int(length))!))
            return .continue
        }
    }

    /// The same decoder written to decode every whole frame per call, as `FrameDecoder` does (row 19's floor).
    struct HandWrittenBatchLengthDecoder: ByteToMessageDecoder {
        typealias InboundOut = ByteBuffer

        mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
            while let length = buffer.getInteger(at: buffer.readerIndex, endianness: .big, as: UInt16.self),
                buffer.readableBytes >= 2 + Int(length)
            {
                buffer.moveReaderIndex(forwardBy: 2)
                context.fireChannelRead(NIOAny(buffer.readSlice(length: Int(length))!))
            }
            return .needMoreData
        }
    }

    /// A pipeline that decodes and counts on the event loop: the hand-written decoder (one frame per call, or every
    /// frame per call with `batching`), or Tether's `FrameDecoder`.
    static func pipeline(port: Int, count: Int, handWritten: Bool, batching: Bool = false) async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let done = loop.makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if handWritten && batching {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(HandWrittenBatchLengthDecoder())
                        )
                    } else if handWritten {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HandWrittenLengthDecoder()))
                    } else {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(codec)))
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        FramingBenchmarks.Counter(target: count, done: done)
                    )
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await done.futureResult.get()
        try await channel.close()
    }

    /// `NIOAsyncChannel` over the hand-written decoder, iterated from a task.
    static func asyncChannel(port: Int, count: Int) async throws {
        try await FramingBenchmarks.asyncChannel(port: port, count: count, decoder: HandWrittenLengthDecoder.init)
    }

    /// Tether's async face: `frames(LengthFieldFrameCodec(fieldLength: .two))`.
    static func tetherFrames(port: Int, count: Int) async throws {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        var seen = 0
        for try await _ in connection.frames(codec) {
            seen += 1
            if seen == count { break }
        }
        try await connection.close()
        if seen != count { throw BenchmarkError(description: "decoded \(seen) of \(count) frames") }
    }
}
