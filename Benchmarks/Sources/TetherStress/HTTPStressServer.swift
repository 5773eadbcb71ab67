import NIOCore
import NIOHTTP1
import NIOPosix

/// The HTTP/1.1 server of the `http` scenario (in a peer process, keep-alive, NIO's server pipeline). Three kinds
/// of resource, each body naming its path:
/// - `/cached/K`: `Cache-Control: max-age=2` and `ETag: "K"`; a matching `If-None-Match` gets 304;
/// - `/validated/K`: `Cache-Control: no-cache` and an ETag: stored, but revalidated on every load (304);
/// - `/fresh/N`: `Cache-Control: no-store`.
final class HTTPStressServer: Sendable {
    let channel: any Channel
    let port: Int

    private init(channel: any Channel) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
    }

    static func start(counters: ServerCounters) async throws -> HTTPStressServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(HTTPStressHandler(counters: counters))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return HTTPStressServer(channel: channel)
    }

    /// The body of `path`: its name, padded to 1 KiB.
    static func body(for path: String) -> String {
        let head = "resource \(path)\n"
        return head + String(repeating: "x", count: max(0, 1_024 - head.utf8.count))
    }
}
