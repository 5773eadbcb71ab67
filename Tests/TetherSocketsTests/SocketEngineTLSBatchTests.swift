import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import Testing

@testable import TetherSockets

/// A TLS handshake that completes in the same read batch as the first application bytes: the peer's last handshake
/// flight and its first record reach the engine in one socket read. NIOSSL then fires the handshake's completion
/// and the decrypted bytes inside one batch, and the read queued behind the upgrade must be served with them.
/// The engine and a NIOSSL peer on two `EmbeddedChannel`s, the bytes moved between them by hand: no sockets, no
/// timing. Which side finishes last depends on the version: TLS 1.3's server (on the client's Finished), TLS 1.2's
/// client (on the server's Finished, which the server may follow with data at once).
struct SocketEngineTLSBatchTests {
    /// Moves everything `from` wrote to `to`, as one read batch of one buffer; false when there was nothing.
    @discardableResult
    private func pump(_ from: EmbeddedChannel, to: EmbeddedChannel) throws -> Bool {
        var joined = ByteBuffer()
        while let chunk = try from.readOutbound(as: ByteBuffer.self) {
            joined.writeImmutableBuffer(chunk)
        }
        guard joined.readableBytes > 0 else { return false }
        to.pipeline.fireChannelRead(joined)
        to.pipeline.fireChannelReadComplete()
        return true
    }

    /// Closes `channel` and ends it. A TLS handler's close waits for the peer's close_notify, which never comes
    /// here: the embedded clock moves past its shutdown timeout. (Ending the channel also breaks the cycle between
    /// the pipeline and the engine.)
    private func tearDown(_ channel: EmbeddedChannel) {
        channel.close(promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    /// The engine on a connected embedded channel, its upgrade installed (the context is cached, so the handler
    /// joins the pipeline at once), and a delegate read with `readTag` queued behind it. Synchronous, like every use
    /// of the embedded channels below: an embedded loop runs its callbacks on the thread that made it.
    private func secureEngine(_ request: TLSUpgrade, readTag: Int) throws -> (EmbeddedChannel, EngineProbe) {
        let channel = EmbeddedChannel()
        let probe = EngineProbe()
        let engine = SocketEngine(eventLoop: channel.embeddedEventLoop, owner: probe, policy: .delegateFace)
        try channel.pipeline.syncOperations.addHandler(engine)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        engine.startTLS(request)
        _ = engine.enqueueRead(
            .available(maxLength: 0),
            timeout: nil,
            waiter: .delegate(tag: readTag, destination: nil)
        )
        return (channel, probe)
    }

    /// The upgrade for `settings`, its context built and cached first (on NIO's thread pool).
    private func cachedUpgrade(_ settings: TLSSettings) async throws -> TLSUpgrade {
        let request = TLSUpgrade(settings: settings, connectHost: nil, promise: nil)
        _ = try await request.context(on: MultiThreadedEventLoopGroup.singleton.next()).get()
        return request
    }

    @Test func aTLS13ServerGetsTheClientsFirstRecordInTheBatchOfItsFinished() async throws {
        let certificates = try await TLSTestCertificates.shared()
        var settings = try certificates.server()
        settings.minimumTLSVersion = .tlsv13
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([try certificates.certificate("ca")])
        try tls13(request: try await cachedUpgrade(settings), client: try NIOSSLContext(configuration: configuration))
    }

    private func tls13(request: TLSUpgrade, client context: NIOSSLContext) throws {
        let (server, probe) = try secureEngine(request, readTag: 7)
        defer { tearDown(server) }
        let client = try connectedPeer(try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
        defer { tearDown(client) }

        // ClientHello → the server's flight, Finished included → the client is secure.
        #expect(try pump(client, to: server))
        #expect(try pump(server, to: client))
        #expect(!probe.events.contains("secured"))
        // The client's Finished and its first record reach the server as one read.
        client.writeAndFlush(ByteBuffer(string: "hello"), promise: nil)
        #expect(try pump(client, to: server))
        expectSecured(probe, thenRead: "hello", tag: 7)
    }

    @Test func aTLS12ClientGetsTheServersFirstRecordInTheBatchOfItsFinished() async throws {
        let certificates = try await TLSTestCertificates.shared()
        var settings = try certificates.client(peerName: "localhost")
        settings.maximumTLSVersion = .tlsv12
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try certificates.certificate("server"))],
            privateKey: .privateKey(try certificates.key("server"))
        )
        configuration.maximumTLSVersion = .tlsv12
        try tls12(request: try await cachedUpgrade(settings), server: try NIOSSLContext(configuration: configuration))
    }

    private func tls12(request: TLSUpgrade, server context: NIOSSLContext) throws {
        let (client, probe) = try secureEngine(request, readTag: 9)
        defer { tearDown(client) }
        let server = try connectedPeer(NIOSSLServerHandler(context: context))
        defer { tearDown(server) }

        // ClientHello → ServerHello…Done → the client's key exchange and Finished → the server is secure.
        #expect(try pump(client, to: server))
        #expect(try pump(server, to: client))
        #expect(try pump(client, to: server))
        #expect(!probe.events.contains("secured"))
        // The server's Finished and its first record reach the client as one read.
        server.writeAndFlush(ByteBuffer(string: "welcome"), promise: nil)
        #expect(try pump(server, to: client))
        expectSecured(probe, thenRead: "welcome", tag: 9)
    }

    /// The NIOSSL peer: its handler on a connected embedded channel (the handshake starts).
    private func connectedPeer(_ handler: NIOSSLHandler) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        return channel
    }

    /// The engine became secure once, and the read behind the upgrade got `text`, with nothing closed.
    private func expectSecured(_ probe: EngineProbe, thenRead text: String, tag: Int) {
        #expect(probe.events.filter { $0 == "secured" }.count == 1)
        #expect(probe.reads.map(\.0) == [text])
        #expect(probe.reads.map(\.1) == [tag])
        #expect(probe.closeError == nil)
    }
}
