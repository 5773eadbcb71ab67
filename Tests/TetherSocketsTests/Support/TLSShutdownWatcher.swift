import NIOCore
import NIOPosix
import NIOSSL
import Testing
import TetherConcurrency

@testable import TetherSockets

/// Placed after the engine in a delegate-face socket's pipeline: records whether NIOSSL's clean shutdown completed
/// (both close_notify alerts exchanged) before the channel went inactive.
final class TLSShutdownWatcher: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    /// Set when the channel went inactive: whether the shutdown completed first.
    let inactive = Latch<Bool>()
    private let completed = LockedBox(false)

    /// A watcher added to `socket`'s channel (on its loop), behind the engine.
    static func watching(_ socket: GCDAsyncSocket) async throws -> TLSShutdownWatcher {
        let watcher = TLSShutdownWatcher()
        // Sendable: the adapter's engine is read on its event loop only.
        let adapter = UncheckedSendableBox(try #require(socket.state.withLock { $0.adapter }))
        let channel = try #require(
            try await adapter.value.eventLoop.submit { adapter.value.engineBox?.context?.channel }.get()
        )
        try await channel.pipeline.addHandler(watcher).get()
        return watcher
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if String(describing: event) == "shutdownCompleted" { completed.withLock { $0 = true } }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inactive.set(completed.withLock { $0 })
        context.fireChannelInactive()
    }
}

/// A NIO TLS server on 127.0.0.1 with the test run's server certificate, `handler` behind NIOSSL in each connection's
/// pipeline.
func startNIOTLSServer(
    _ handler: some ChannelHandler & Sendable,
    allowRemoteHalfClosure: Bool = false
) async throws -> any Channel {
    let certificates = try await TLSTestCertificates.shared()
    let context = try NIOSSLContext(
        configuration: .makeServerConfiguration(
            certificateChain: [.certificate(try certificates.certificate("server"))],
            privateKey: .privateKey(try certificates.key("server"))
        )
    )
    return try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: allowRemoteHalfClosure)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }
        .bind(host: "127.0.0.1", port: 0).get()
}
