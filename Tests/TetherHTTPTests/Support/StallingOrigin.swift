import Foundation
import NIOCore
import NIOPosix
import TetherConcurrency

/// An origin on 127.0.0.1 that answers its first request with a head and the first bytes of a longer body, then
/// stalls, and reports when the client closes the connection: for the idle timeout's race with bytes that already
/// arrived.
final class StallingOrigin: Sendable {
    let port: Int
    private let listener: any Channel
    private let connectionClosed: EventLoopPromise<Void>

    /// Starts an origin that answers with `head` (the status line and header lines, without the blank line) and
    /// `bodyPrefix`, and sends nothing more.
    static func start(head: String, bodyPrefix: String) async throws -> StallingOrigin {
        let group = MultiThreadedEventLoopGroup.singleton
        let connectionClosed = group.next().makePromise(of: Void.self)
        let response = head + "\r\n\r\n" + bodyPrefix
        let listener = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.closeFuture.cascade(to: connectionClosed)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StallingOriginHandler(response: response))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else { throw POSIXError(.EADDRNOTAVAIL) }
        return StallingOrigin(port: port, listener: listener, connectionClosed: connectionClosed)
    }

    private init(port: Int, listener: any Channel, connectionClosed: EventLoopPromise<Void>) {
        self.port = port
        self.listener = listener
        self.connectionClosed = connectionClosed
    }

    func url(_ pathAndQuery: String) -> URL {
        URL(string: "http://127.0.0.1:\(self.port)\(pathAndQuery)")!
    }

    /// Waits until the client closed its connection, or `limit` passed (a guard against a hang, not a timing).
    /// - Returns: whether the client closed it.
    func waitForClientClose(limit: TimeAmount) async -> Bool {
        let closed = self.connectionClosed.futureResult
        // A promise completes once; the later completion is ignored.
        let first = closed.eventLoop.makePromise(of: Bool.self)
        closed.whenComplete { _ in first.succeed(true) }
        let hangGuard = closed.eventLoop.scheduleTask(in: limit) { first.succeed(false) }
        let didClose = (try? await first.futureResult.get()) ?? false
        hangGuard.cancel()
        return didClose
    }

    func stop() async {
        try? await self.listener.close()
        self.connectionClosed.succeed()
    }
}

/// One connection of ``StallingOrigin``: answers the first bytes it reads, then stays silent.
private final class StallingOriginHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let response: String
    private var hasAnswered = false

    init(response: String) {
        self.response = response
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.hasAnswered else { return }
        self.hasAnswered = true
        context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: self.response)), promise: nil)
    }
}
