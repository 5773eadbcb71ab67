import NIOCore
import NIOPosix

/// The raw engine, two ways: NIO channel handlers on the event loop, and `NIOAsyncChannel` from a task.
enum RawNIO {
    static let group = MultiThreadedEventLoopGroup.singleton

    // MARK: handlers

    static func handlersUpload(port: Int, total: Int) async throws {
        let done = group.next().makePromise(of: Void.self)
        _ = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(UploadHandler(total: total, done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await done.futureResult.get()
    }

    static func handlersDownload(port: Int) async throws -> Int {
        let done = group.next().makePromise(of: Int.self)
        _ = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DownloadHandler(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return try await done.futureResult.get()
    }

    static func handlersPingPong(port: Int, roundTrips: Int) async throws {
        let done = group.next().makePromise(of: Void.self)
        _ = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(PingPongHandler(roundTrips: roundTrips, done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await done.futureResult.get()
    }

    // MARK: NIOAsyncChannel

    static func asyncChannel(port: Int) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    }

    static func asyncUpload(port: Int, total: Int) async throws {
        let channel = try await asyncChannel(port: port)
        let chunk = ByteBuffer(repeating: 0x41, count: 65_536)
        try await channel.executeThenClose { inbound, outbound in
            var sent = 0
            while sent < total {
                try await outbound.write(chunk)
                sent += chunk.readableBytes
            }
            // Done when the peer, having every byte, closes.
            for try await _ in inbound {}
        }
    }

    static func asyncDownload(port: Int) async throws -> Int {
        let channel = try await asyncChannel(port: port)
        return try await channel.executeThenClose { inbound, _ in
            var count = 0
            for try await buffer in inbound { count += buffer.readableBytes }
            return count
        }
    }

    static func asyncPingPong(port: Int, roundTrips: Int) async throws {
        let channel = try await asyncChannel(port: port)
        let request = ByteBuffer(repeating: 0x42, count: 64)
        try await channel.executeThenClose { inbound, outbound in
            var iterator = inbound.makeAsyncIterator()
            for _ in 0..<roundTrips {
                try await outbound.write(request)
                var received = 0
                while received < 64 {
                    guard let buffer = try await iterator.next() else { throw BenchmarkError(description: "EOF") }
                    received += buffer.readableBytes
                }
            }
        }
    }
}

final class UploadHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let total: Int
    let done: EventLoopPromise<Void>
    var sent = 0
    let chunk = ByteBuffer(repeating: 0x41, count: 65_536)

    init(total: Int, done: EventLoopPromise<Void>) {
        self.total = total
        self.done = done
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.succeed()
    }

    func channelActive(context: ChannelHandlerContext) { pump(context: context) }
    func channelWritabilityChanged(context: ChannelHandlerContext) { pump(context: context) }

    private func pump(context: ChannelHandlerContext) {
        while context.channel.isWritable && sent < total {
            sent += chunk.readableBytes
            if sent >= total {
                // Done when the peer, having every byte, closes.
                context.writeAndFlush(wrapOutboundOut(chunk), promise: nil)
                return
            }
            context.write(wrapOutboundOut(chunk), promise: nil)
        }
        context.flush()
    }
}

final class DownloadHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let done: EventLoopPromise<Int>
    var count = 0

    init(done: EventLoopPromise<Int>) {
        self.done = done
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        count += unwrapInboundIn(data).readableBytes
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.succeed(count)
    }
}

final class PingPongHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let done: EventLoopPromise<Void>
    var remaining: Int
    var received = 0
    let request = ByteBuffer(repeating: 0x42, count: 64)

    init(roundTrips: Int, done: EventLoopPromise<Void>) {
        self.remaining = roundTrips
        self.done = done
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(request), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytes
        while received >= 64 {
            received -= 64
            remaining -= 1
            if remaining == 0 {
                context.close(promise: nil)
                done.succeed()
                return
            }
            context.writeAndFlush(wrapOutboundOut(request), promise: nil)
        }
    }
}
