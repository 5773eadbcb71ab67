import NIOCore

/// Writes `message`, waits for the reply (`unitsPerMessage` units, counted by `units` in each read), writes again, …
/// `messages` times, then completes `done`: all on the event loop, the engine's own way of talking.
final class RoundTripHandler<In, Out>: ChannelInboundHandler {
    typealias InboundIn = In
    typealias OutboundOut = Out
    let message: Out
    let units: (In) -> Int
    private var unitsPerMessage = 1
    private var remaining = 0
    private var received = 0
    private var done: EventLoopPromise<Void>?
    private var context: ChannelHandlerContext?

    init(message: Out, units: @escaping (In) -> Int) {
        self.message = message
        self.units = units
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Starts a run (on the event loop).
    func start(messages: Int, unitsPerMessage: Int, done: EventLoopPromise<Void>) {
        guard let context else { return done.fail(ChannelError.ioOnClosedChannel) }
        self.unitsPerMessage = unitsPerMessage
        self.remaining = messages
        self.received = 0
        self.done = done
        context.writeAndFlush(wrapOutboundOut(message), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += units(unwrapInboundIn(data))
        while received >= unitsPerMessage, let done {
            received -= unitsPerMessage
            remaining -= 1
            if remaining == 0 {
                self.done = nil
                done.succeed()
                return
            }
            context.writeAndFlush(wrapOutboundOut(message), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        done?.fail(ChannelError.eof)
        done = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done?.fail(error)
        done = nil
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension RoundTripHandler: Sendable {}
