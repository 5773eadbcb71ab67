import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherConcurrency

/// The cache-tests suite's origin server, ported to SwiftNIO and run in process on 127.0.0.1
/// (``CacheTestsOriginHandler`` answers; ``CacheTestsOriginState`` remembers). The runner talks to it over HTTP as the
/// suite's client talks to its Node origin, so either can serve a run (`TETHER_CACHE_TESTS_ORIGIN`).
final class CacheTestsOrigin: Sendable {
    let port: Int
    /// What it remembers, and each test's clock.
    let state: CacheTestsOriginState
    private let listener: any Channel
    /// The connections it accepted, closed by ``stop()``.
    private let connections: LockedBox<[any Channel]>

    static func start() async throws -> CacheTestsOrigin {
        let state = CacheTestsOriginState()
        let connections = LockedBox<[any Channel]>([])
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                connections.withLock { $0.append(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes))
                    )
                    try channel.pipeline.syncOperations.addHandler(CacheTestsOriginHandler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else { throw POSIXError(.EADDRNOTAVAIL) }
        return CacheTestsOrigin(port: port, state: state, listener: listener, connections: connections)
    }

    private init(port: Int, state: CacheTestsOriginState, listener: any Channel, connections: LockedBox<[any Channel]>)
    {
        self.port = port
        self.state = state
        self.listener = listener
        self.connections = connections
    }

    var baseURL: String { "http://127.0.0.1:\(self.port)" }

    /// Closes the listener and every connection it accepted.
    func stop() async {
        try? await self.listener.close()
        for connection in self.connections.withLock({ $0 }) { try? await connection.close() }
    }
}
