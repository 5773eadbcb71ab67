import Dispatch
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix

/// The floor of a face that calls back on a queue: every read crosses to the queue once, as `Data`, without a copy.
enum QueueHopDownload {
    static func run(port: Int) async throws -> Int {
        let done = RawNIO.group.next().makePromise(of: Int.self)
        _ = try await ClientBootstrap(group: RawNIO.group)
            .channelOption(
                .recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2_048, maximum: 262_144)
            )
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return try await done.futureResult.get()
    }

    /// Counts on the queue what the loop hands it.
    // Sendable: `count` is touched only on `queue`, a serial queue.
    final class Counter: @unchecked Sendable {
        var count = 0
    }

    final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let done: EventLoopPromise<Int>
        let queue = DispatchQueue(label: "benchmark.floor")
        let counter = Counter()

        init(done: EventLoopPromise<Int>) {
            self.done = done
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            let bytes = buffer.getData(
                at: buffer.readerIndex,
                length: buffer.readableBytes,
                byteTransferStrategy: .noCopy
            )!
            let counter = self.counter
            queue.async { counter.count += bytes.count }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let counter = self.counter
            let done = self.done
            queue.async { done.succeed(counter.count) }
        }
    }
}
