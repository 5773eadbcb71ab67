import NIOCore

/// Runs a ``ProxyHandshake`` on a channel connected to the proxy, before any face sees the channel.
///
/// The connector adds it as the first handler; `tunnel` succeeds once the proxy opened the tunnel, or fails with a
/// ``GCDAsyncSocketError`` carrying the ``ProxyError`` (or the channel's own error). While the handshake runs, nothing
/// passes it. Once the tunnel is up, the face's handlers join the pipeline behind it and it is removed: bytes the
/// proxy sent after its answer (the tunnel's first bytes) and an end of input seen meanwhile go on to them then.
final class ProxyHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case handshaking
        case established
        case failed
    }

    private var machine: ProxyHandshake
    private var state = State.handshaking
    private var started = false
    private var buffered = ByteBuffer()
    private var sawEndOfInput = false
    let tunnel: EventLoopPromise<Void>

    init(handshake: ProxyHandshake, tunnel: EventLoopPromise<Void>) {
        self.machine = handshake
        self.tunnel = tunnel
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        guard state == .handshaking else { return }
        state = .failed
        tunnel.fail(
            GCDAsyncSocketError.proxy(
                ProxyError(code: .closedDuringHandshake, message: "The proxy handshake was abandoned")
            )
        )
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        execute(machine.start(), context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffered.writeBuffer(&bytes)
        guard state == .handshaking else { return }
        execute(machine.received(&buffered), context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        sawEndOfInput = true
        if state == .handshaking { execute(machine.endOfInput(), context: context) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if state == .handshaking { execute(machine.endOfInput(), context: context) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard state == .handshaking else {
            context.fireErrorCaught(error)
            return
        }
        state = .failed
        tunnel.fail(GCDAsyncSocketError.wrapping(error, function: "connect"))
        context.close(promise: nil)
    }

    private func execute(_ first: ProxyHandshakeAction, context: ChannelHandlerContext) {
        var action = first
        while true {
            switch action {
            case .write(let bytes):
                context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
                // A proxy that answered ahead (pipelined bytes) is served from what is buffered.
                guard buffered.readableBytes > 0 else { return }
                action = machine.received(&buffered)
            case .waitForMoreBytes:
                return
            case .tunnelEstablished:
                state = .established
                tunnel.succeed(())
                return
            case .fail(let error):
                state = .failed
                tunnel.fail(GCDAsyncSocketError.proxy(error))
                context.close(promise: nil)
                return
            }
        }
    }

    /// Hands the tunnel's first bytes (and an end of input) to the handlers behind, then leaves.
    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        if state == .established {
            if buffered.readableBytes > 0 {
                let bytes = buffered
                buffered = ByteBuffer()
                context.fireChannelRead(wrapInboundOut(bytes))
                context.fireChannelReadComplete()
            }
            if sawEndOfInput { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        }
        context.leavePipeline(removalToken: removalToken)
    }
}

@available(*, unavailable)
extension ProxyHandshakeHandler: Sendable {}
