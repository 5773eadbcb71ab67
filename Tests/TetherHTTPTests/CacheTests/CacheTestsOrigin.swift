import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The cache-tests suite's origin server, ported to SwiftNIO and run in process on 127.0.0.1
/// (``CacheTestsOriginHandler`` answers; ``CacheTestsOriginState`` remembers). The runner talks to it over HTTP as the
/// suite's client talks to its Node origin, so either can serve a run (`TETHER_CACHE_TESTS_ORIGIN`).
final class CacheTestsOrigin: Sendable {
    let port: Int
    private let listener: any Channel

    static func start() async throws -> CacheTestsOrigin {
        let state = CacheTestsOriginState()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes))
                    )
                    try channel.pipeline.syncOperations.addHandler(CacheTestsOriginHandler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else { throw POSIXError(.EADDRNOTAVAIL) }
        return CacheTestsOrigin(port: port, listener: listener)
    }

    private init(port: Int, listener: any Channel) {
        self.port = port
        self.listener = listener
    }

    var baseURL: String { "http://127.0.0.1:\(self.port)" }

    /// Closes the listener (the connections end with the clients' engines).
    func stop() async {
        try? await self.listener.close()
    }
}
