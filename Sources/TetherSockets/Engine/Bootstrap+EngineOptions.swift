import NIOCore
import NIOPosix

/// The options every TCP channel of the engine is made with, in one place: the engine sees the peer's half-close
/// (and decides what it means per face), and reads grow as ``ReceiveSizing`` says.
extension ClientBootstrap {
    /// This bootstrap with the engine's channel options.
    func engineChannelOptions() -> ClientBootstrap {
        channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.recvAllocator, value: ReceiveSizing.allocator)
    }
}

extension ServerBootstrap {
    /// This bootstrap with the engine's channel options for the channels it accepts.
    func engineChildChannelOptions() -> ServerBootstrap {
        childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.recvAllocator, value: ReceiveSizing.allocator)
    }
}
