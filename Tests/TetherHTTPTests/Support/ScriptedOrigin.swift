import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import TetherConcurrency

/// An in-process origin on 127.0.0.1 (SwiftNIO, optionally TLS with ``TestCertificates``) whose every answer a test
/// writes as a closure, and which records every request it receives: for tests that need a response no shared route
/// gives, and to see exactly which headers reached the server.
final class ScriptedOrigin: Sendable {
    /// A request as the origin received it.
    struct Request: Sendable {
        var method: String
        var uri: String
        var headers: HTTPHeaders

        var path: String { String(self.uri.split(separator: "?", maxSplits: 1).first ?? "") }
    }

    /// An answer: status, header lines and body.
    struct Response: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        init(_ status: Int = 200, _ headers: [(String, String)] = [], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        init(_ status: Int = 200, _ headers: [(String, String)] = [], _ text: String = "") {
            self.init(status, headers, body: Array(text.utf8))
        }
    }

    let port: Int
    let scheme: String
    private let listener: any Channel
    private let recorded: LockedBox<[Request]>
    private let connections: LockedBox<[any Channel]>

    /// Starts an origin that answers each request with `respond` (called on an event loop: it must not block).
    static func start(
        tls: Bool = false,
        _ respond: @escaping @Sendable (Request) -> Response
    ) async throws -> ScriptedOrigin {
        let sslContext: NIOSSLContext?
        if tls {
            let certificates = try await TestCertificates.shared()
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificates.serverCertificatePath).map {
                    .certificate($0)
                },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: certificates.serverKeyPath, format: .pem))
            )
            sslContext = try NIOSSLContext(configuration: configuration)
        } else {
            sslContext = nil
        }
        let recorded = LockedBox<[Request]>([])
        let connections = LockedBox<[any Channel]>([])
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                connections.withLock { $0.append(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        ScriptedOriginHandler(respond: respond, recorded: recorded)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else { throw POSIXError(.EADDRNOTAVAIL) }
        return ScriptedOrigin(
            port: port,
            scheme: tls ? "https" : "http",
            listener: listener,
            recorded: recorded,
            connections: connections
        )
    }

    private init(
        port: Int,
        scheme: String,
        listener: any Channel,
        recorded: LockedBox<[Request]>,
        connections: LockedBox<[any Channel]>
    ) {
        self.port = port
        self.scheme = scheme
        self.listener = listener
        self.recorded = recorded
        self.connections = connections
    }

    func url(_ pathAndQuery: String) -> URL {
        URL(string: "\(self.scheme)://127.0.0.1:\(self.port)\(pathAndQuery)")!
    }

    /// Every request received so far, in order.
    var requests: [Request] { self.recorded.withLock { $0 } }

    /// The requests received so far for `path`.
    func requests(to path: String) -> [Request] { self.requests.filter { $0.path == path } }

    /// Closes the listener and every connection it accepted.
    func stop() async {
        try? await self.listener.close()
        for connection in self.connections.withLock({ $0 }) { try? await connection.close() }
    }
}

/// Runs `body` with an origin of its own, stopped afterwards whether `body` threw or not.
func withScriptedOrigin<T: Sendable>(
    tls: Bool = false,
    _ respond: @escaping @Sendable (ScriptedOrigin.Request) -> ScriptedOrigin.Response,
    _ body: (ScriptedOrigin) async throws -> T
) async throws -> T {
    let origin = try await ScriptedOrigin.start(tls: tls, respond)
    do {
        let result = try await body(origin)
        await origin.stop()
        return result
    } catch {
        await origin.stop()
        throw error
    }
}
