import NIOCore
import NIOPosix
import NIOSSL

/// A raw NIO server in this process, for the side-by-side mode (both ends in one process). It runs on its own
/// event-loop group, so that the client under test (raw NIO or Tether, both on the shared singleton) never shares
/// a loop with it, whichever loop the client's connect picks.
final class InProcessServer {
    let channel: any Channel

    var port: Int { channel.localAddress!.port! }

    private init(channel: any Channel) {
        self.channel = channel
    }

    /// A TCP server; each accepted connection gets the handler `makeHandler` returns, behind NIOSSL when `tls` is set.
    static func tcp(
        group: any EventLoopGroup,
        tls: NIOSSLContext? = nil,
        makeHandler: @escaping @Sendable () -> any ChannelHandler
    ) async throws -> InProcessServer {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandler(makeHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return InProcessServer(channel: channel)
    }

    /// A UDP socket that echoes each datagram to its sender.
    static func udpEcho(group: any EventLoopGroup) async throws -> InProcessServer {
        let channel = try await DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramEchoHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return InProcessServer(channel: channel)
    }

    func stop() async throws {
        try await channel.close()
    }
}
