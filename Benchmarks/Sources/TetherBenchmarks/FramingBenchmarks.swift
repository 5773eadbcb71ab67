import Dispatch
import Foundation
import NIOCore
import NIOPosix
import TetherCore
import TetherSockets

/// The framing benchmark: the peer sends `count` pipelined STX frames with 32-byte payloads; each variant
/// decodes all of them.
enum FramingBenchmarks {
    static let payloadLength = 32

    static func wire(count: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        let codec = STXFrameCodec()
        for index in 0..<count {
            let frame = STXFrame(
                destination: UInt16(truncatingIfNeeded: index),
                source: 1,
                bytes: (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            )
            try! codec.encode(frame, into: &buffer)
        }
        return buffer
    }

    // (a) a hand-written decoder for the same format.
    struct HandWrittenSTXDecoder: ByteToMessageDecoder {
        typealias InboundOut = ByteBuffer
        mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
            guard buffer.readableBytes >= 7 else { return .needMoreData }
            let start = buffer.readerIndex
            guard buffer.getInteger(at: start, as: UInt8.self) == 0x02 else {
                throw BenchmarkError(description: "start")
            }
            let length = Int(buffer.getInteger(at: start + 5, endianness: .little, as: UInt16.self)!)
            guard buffer.readableBytes >= 7 + length + 1 else { return .needMoreData }
            var crc: UInt8 = 0
            for byte in buffer.readableBytesView.prefix(7 + length) {
                crc ^= byte
                for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
            }
            guard buffer.getInteger(at: start + 7 + length, as: UInt8.self) == crc else {
                throw BenchmarkError(description: "crc")
            }
            buffer.moveReaderIndex(forwardBy: 7)
            let payload = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(wrapInboundOut(payload))
            return .continue
        }
    }

    final class Counter: ChannelInboundHandler {
        typealias InboundIn = Any
        let target: Int
        let done: EventLoopPromise<Void>
        var count = 0
        init(target: Int, done: EventLoopPromise<Void>) {
            self.target = target
            self.done = done
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            count += 1
            if count == target { done.succeed() }
        }
    }

    static func pipeline(port: Int, count: Int, handWritten: Bool) async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let done = loop.makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if handWritten {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HandWrittenSTXDecoder()))
                    } else {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(FrameDecoder(STXFrameCodec()))
                        )
                    }
                    try channel.pipeline.syncOperations.addHandler(Counter(target: count, done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await done.futureResult.get()
        try await channel.close()
    }

    // (c) NIOAsyncChannel iterating (a)'s decoder.
    static func asyncChannel(port: Int, count: Int) async throws {
        try await asyncChannel(port: port, count: count, decoder: HandWrittenSTXDecoder.init)
    }

    /// `NIOAsyncChannel` over `decoder`, iterated from a task until `count` frames came (fewer is an error).
    static func asyncChannel<Decoder: ByteToMessageDecoder>(
        port: Int,
        count: Int,
        decoder: @escaping @Sendable () -> Decoder
    ) async throws where Decoder.InboundOut == ByteBuffer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(decoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, _ in
            var seen = 0
            for try await _ in inbound {
                seen += 1
                if seen == count { break }
            }
            if seen != count { throw BenchmarkError(description: "decoded \(seen) of \(count) frames") }
        }
    }

    // (d) Tether's async face.
    static func tetherFrames(port: Int, count: Int) async throws {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        var seen = 0
        for try await _ in connection.frames(STXFrameCodec()) {
            seen += 1
            if seen == count { break }
        }
        try await connection.close()
    }

    // (e) the delegate face with the seed's two tagged reads per frame.
    static func tetherDelegate(port: Int, count: Int) async throws {
        let driver = FrameTagDriver(count: count)
        try await driver.run(port: port, delivery: .delegateQueue)
    }
}

final class FrameTagDriver: Driver, @unchecked Sendable {
    let count: Int
    var seen = 0

    init(count: Int) {
        self.count = count
    }

    override func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        sock.readData(toLength: 7, withTimeout: -1, tag: 10)
    }

    override func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        if tag == 10 {
            let length = Int(data[data.startIndex + 5]) | Int(data[data.startIndex + 6]) << 8
            sock.readData(toLength: UInt(length + 1), withTimeout: -1, tag: 11)
            return
        }
        seen += 1
        if seen == count {
            finish(.success(()))
            sock.disconnect()
        } else {
            sock.readData(toLength: 7, withTimeout: -1, tag: 10)
        }
    }
}
