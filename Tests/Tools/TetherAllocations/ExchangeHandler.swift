import NIOCore

/// On a new connection: writes 64 bytes, reads the 64 that come back, closes.
final class ExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var received = 0

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(EngineWorkloads.message), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytes
        if received >= EngineWorkloads.message.readableBytes { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension ExchangeHandler: Sendable {}
