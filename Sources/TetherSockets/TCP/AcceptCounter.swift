import Logging
import NIOCore

/// The first handler of a listener's server channel: reports each accepted connection to the ``AcceptGate`` and
/// stops reading (accepting) in the same loop turn when the gate says so.
final class AcceptCounter: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let gate: AcceptGate
    private let logger: Logger?

    init(gate: AcceptGate, logger: Logger?) {
        self.gate = gate
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if gate.accepted() {
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
            logger?.debug("accepting paused", metadata: ["waiting": "\(gate.limit)"])
        }
        context.fireChannelRead(data)
    }
}

@available(*, unavailable)
extension AcceptCounter: Sendable {}
