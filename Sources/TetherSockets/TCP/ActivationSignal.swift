import NIOCore

/// The last handler of an accepted connection's pipeline until it is handed to the listener's consumer: completes
/// `promise` when the channel becomes active (NIO registers an accepted channel after its initializer ran, and not
/// at all when the listener closed meanwhile), and fails it if the channel closes first.
final class ActivationSignal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<Void>
    private var completed = false

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        context.channel.closeFuture.assumeIsolated().whenComplete { [self] _ in
            complete(with: .failure(ChannelError.ioOnClosedChannel))
        }
        if context.channel.isActive { complete(with: .success(())) }
    }

    func channelActive(context: ChannelHandlerContext) {
        complete(with: .success(()))
        context.fireChannelActive()
    }

    private func complete(with result: Result<Void, any Error>) {
        guard !completed else { return }
        completed = true
        promise.completeWith(result)
    }
}

@available(*, unavailable)
extension ActivationSignal: Sendable {}
