import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An in-process HTTPS server on 127.0.0.1 (SwiftNIO with swift-nio-http2), its certificate from
/// ``TestCertificates``. It offers the given protocols in ALPN and speaks HTTP/2 on connections that negotiate `h2`
/// (`configureHTTP2Pipeline` with `HTTP2FramePayloadToHTTP1ServerCodec` per stream), HTTP/1.1 on the others; either
/// way ``HTTP2TestHandler`` answers with plain HTTP/1 parts. One per test: ``log`` counts its connections.
final class HTTP2TestServer: Sendable {
    let port: Int
    let log: HTTP2TestServerLog
    private let listener: any Channel

    /// Starts a server offering `protocols` in ALPN, in order of preference.
    static func start(offering protocols: [String] = ["h2", "http/1.1"]) async throws -> HTTP2TestServer {
        let certificates = try await TestCertificates.shared()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificates.serverCertificatePath).map {
                .certificate($0)
            },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: certificates.serverKeyPath, format: .pem))
        )
        tls.applicationProtocols = protocols
        let context = try NIOSSLContext(configuration: tls)
        let log = HTTP2TestServerLog()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                log.accepted(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    // h2: configureHTTP2Pipeline, and per stream HTTP2FramePayloadToHTTP1ServerCodec + the
                    // configurator's handler; http/1.1 (or no ALPN): the HTTP/1 server pipeline + the handler.
                    channel.configureCommonHTTPServerPipeline { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2TestHandler(log: log))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else { throw POSIXError(.EADDRNOTAVAIL) }
        return HTTP2TestServer(port: port, log: log, listener: listener)
    }

    private init(port: Int, log: HTTP2TestServerLog, listener: any Channel) {
        self.port = port
        self.log = log
        self.listener = listener
    }

    func url(_ pathAndQuery: String) -> URL {
        URL(string: "https://127.0.0.1:\(self.port)\(pathAndQuery)")!
    }

    /// Closes the listener and every connection it accepted.
    func stop() async {
        try? await self.listener.close()
        for connection in self.log.connections { try? await connection.close() }
    }
}

/// Runs `body` with a server of its own, stopped afterwards whether `body` threw or not.
func withHTTP2TestServer<T: Sendable>(
    offering protocols: [String] = ["h2", "http/1.1"],
    _ body: (HTTP2TestServer) async throws -> T
) async throws -> T {
    let server = try await HTTP2TestServer.start(offering: protocols)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
