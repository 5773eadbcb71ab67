import NIOCore
import NIOHTTP1
import NIOPosix

/// The peers every case talks to, raw NIO on an event loop of their own (the clients use the shared singleton):
/// a TCP echo, a TCP frame source, a UDP echo and an HTTP/1.1 server. What they allocate is counted with each
/// variant, the same for Tether's and the engine's.
final class PeerServers: Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    /// Connections that the TCP peers saw close.
    let tally = ConnectionTally()
    let echoPort: Int
    let framePort: Int
    let udpPort: Int
    let httpPort: Int
    private let channels: [any Channel]

    /// What the frame source writes for each byte it reads.
    let frameBatch: ByteBuffer

    init(frameBatch: ByteBuffer) async throws {
        self.frameBatch = frameBatch
        let (group, tally) = (self.group, self.tally)
        let echo = try await Self.tcp(group: group) { TCPPeerHandler(reply: nil, tally: tally) }
        let frames = try await Self.tcp(group: group) { TCPPeerHandler(reply: frameBatch, tally: tally) }
        let udp = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramEchoHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let http = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(HTTPPeerHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        channels = [echo, frames, udp, http]
        echoPort = echo.localAddress!.port!
        framePort = frames.localAddress!.port!
        udpPort = udp.localAddress!.port!
        httpPort = http.localAddress!.port!
    }

    private static func tcp(
        group: MultiThreadedEventLoopGroup,
        handler: @escaping @Sendable () -> TCPPeerHandler
    ) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(handler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func stop() async throws {
        for channel in channels { try await channel.close() }
        try await group.shutdownGracefully()
    }
}
