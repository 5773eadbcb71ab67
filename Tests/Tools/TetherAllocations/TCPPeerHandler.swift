import NIOCore

/// Echoes what it reads (or writes `reply` once per byte read), and counts its connection's close.
final class TCPPeerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let reply: ByteBuffer?
    let tally: ConnectionTally

    init(reply: ByteBuffer?, tally: ConnectionTally) {
        self.reply = reply
        self.tally = tally
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let reply else { return context.write(data, promise: nil) }
        for _ in 0..<unwrapInboundIn(data).readableBytes { context.write(wrapOutboundOut(reply), promise: nil) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        tally.connectionClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension TCPPeerHandler: Sendable {}
