import Dispatch
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix
import TetherSockets

/// Rows 17–18 (`--only side-by-side-floor`): where the delegate face's bulk download stands against what any face
/// that calls back on a queue must pay, and what the same face costs with its callbacks on the event loop.
///
/// Row 17's "raw" is the floor of a queue face: a NIO handler that hands each read to a serial `DispatchQueue` as a
/// `Data` over the read's own bytes (no copy), one `async` per read, reading up to 256 KiB at a time as Tether does.
/// Row 18 runs Tether's delegate face with `callbackDelivery = .eventLoop` against row 2's counting handler.
extension SideBySideSuite {
    static let floorRows = [17, 18]

    static func makeFloor(
        _ number: Int,
        sizes: Sizes,
        group: any EventLoopGroup
    ) async throws -> (SideBySideRow, InProcessServer) {
        let bulk = sizes.bulkBytes
        let server = try await InProcessServer.tcp(group: group) { SourceHandler(total: bulk) }
        let port = server.port
        let check = { (count: Int) throws in
            if count != bulk { throw BenchmarkError(description: "received \(count) of \(bulk) bytes") }
        }
        let row: SideBySideRow
        if number == 17 {
            row = SideBySideRow(
                number: 17,
                name: "delegate face (queue), bulk download \(bulk >> 20) MiB, against a queue face's floor",
                unit: "B/s",
                amount: Double(bulk),
                target: "—",
                rawName: "NIO handler, one DispatchQueue hop per read (Data without a copy, reads up to 256 KiB)",
                raw: { try check(try await QueueHopDownload.run(port: port)) },
                tether: { try check(try await TetherClients.delegateDownload(port: port, delivery: .delegateQueue)) }
            )
        } else {
            row = SideBySideRow(
                number: 18,
                name: "delegate face (event loop delivery), bulk download \(bulk >> 20) MiB",
                unit: "B/s",
                amount: Double(bulk),
                target: "—",
                rawName: "NIO handler counting bytes",
                raw: { try check(try await RawNIO.handlersDownload(port: port)) },
                tether: { try check(try await TetherClients.delegateDownload(port: port, delivery: .eventLoop)) }
            )
        }
        return (row, server)
    }
}

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
