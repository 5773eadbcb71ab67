import NIOCore
import NIOEmbedded
import Testing

@testable import TetherSockets

/// The handler that runs a proxy handshake, over an `EmbeddedChannel`: nothing passes it during the handshake, and
/// the proxy's bytes after its answer reach the handlers behind it once it leaves.
struct ProxyHandshakeHandlerTests {
    /// Collects what passes the proxy handler.
    final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var bytes: [UInt8] = []
        var sawEndOfInput = false
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            bytes += Array(unwrapInboundIn(data).readableBytesView)
        }
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? ChannelEvent, event == .inputClosed { sawEndOfInput = true }
        }
    }

    func connectedChannel(
        _ proxy: ProxyConfiguration
    ) throws -> (EmbeddedChannel, ProxyHandshakeHandler) {
        let channel = EmbeddedChannel()
        let handler = ProxyHandshakeHandler(
            handshake: ProxyHandshake(proxy: proxy, target: ProxyTarget(host: "example.com", port: 80)),
            tunnel: channel.eventLoop.makePromise()
        )
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1080)).wait()
        return (channel, handler)
    }

    @Test func theTunnelsFirstBytesReachTheNextHandlerWhenTheHandshakeHandlerLeaves() throws {
        let (channel, handler) = try connectedChannel(.httpConnect(host: "127.0.0.1", port: 3128))
        let request = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: request).hasPrefix("CONNECT example.com:80 HTTP/1.1\r\n"))
        var succeeded = false
        handler.tunnel.futureResult.assumeIsolated().whenSuccess { succeeded = true }
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\nfirst"))
        try channel.writeInbound(ByteBuffer(string: " second"))
        #expect(succeeded)
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        let collector = Collector()
        try channel.pipeline.syncOperations.addHandler(collector)
        try channel.pipeline.syncOperations.removeHandler(handler).wait()
        #expect(String(decoding: collector.bytes, as: UTF8.self) == "first second")
        try channel.writeInbound(ByteBuffer(string: "!"))
        #expect(String(decoding: collector.bytes, as: UTF8.self) == "first second!")
        _ = try channel.finish()
    }

    @Test func anEndOfInputRightAfterTheAnswerIsPassedOnWithTheBytes() throws {
        let (channel, handler) = try connectedChannel(.socks5(host: "127.0.0.1", port: 1080))
        _ = try channel.readOutbound(as: ByteBuffer.self)
        try channel.writeInbound(ByteBuffer(bytes: [0x05, 0x00]))
        _ = try channel.readOutbound(as: ByteBuffer.self)
        try channel.writeInbound(ByteBuffer(bytes: [0x05, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x42]))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        let collector = Collector()
        try channel.pipeline.syncOperations.addHandler(collector)
        try channel.pipeline.syncOperations.removeHandler(handler).wait()
        #expect(collector.bytes == [0x42])
        #expect(collector.sawEndOfInput)
        _ = try channel.finish()
    }

    @Test func aRefusalFailsTheTunnelWithTheProxyErrorAndClosesTheChannel() throws {
        let (channel, handler) = try connectedChannel(.socks5(host: "127.0.0.1", port: 1080))
        _ = try channel.readOutbound(as: ByteBuffer.self)
        var failure: (any Error)?
        handler.tunnel.futureResult.assumeIsolated().whenFailure { failure = $0 }
        try channel.writeInbound(ByteBuffer(bytes: [0x05, 0x00]))
        _ = try channel.readOutbound(as: ByteBuffer.self)
        try channel.writeInbound(ByteBuffer(bytes: [0x05, 0x02]))
        let error = try #require(failure as? GCDAsyncSocketError)
        #expect(error.proxyError?.code == .connectionNotAllowed)
        #expect(!channel.isActive)
    }

    @Test func theProxyClosingDuringTheHandshakeFailsTheTunnel() throws {
        let (channel, handler) = try connectedChannel(.httpConnect(host: "127.0.0.1", port: 3128))
        var failure: (any Error)?
        handler.tunnel.futureResult.assumeIsolated().whenFailure { failure = $0 }
        try channel.close().wait()
        let error = try #require(failure as? GCDAsyncSocketError)
        #expect(error.proxyError?.code == .closedDuringHandshake)
    }
}
