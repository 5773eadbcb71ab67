import NIOCore
import NIOPosix
import NIOSSL
import TetherConcurrency

/// The far end of a simulated connection that switches to TLS: a NIO channel on the accepted descriptor with a
/// ``TLSStreamingPeerHandler``. It streams `plaintextSent` bytes of the simulated stream in plaintext, takes
/// `plaintextReceived` plaintext bytes of the socket's, then answers the socket's handshake as a TLS server with the
/// test certificate and goes on with both streams encrypted (from the start when both counts are 0).
final class TLSStreamingPeer: SimulationPeer {
    let state: LockedBox<StreamingPeer.State>
    let receiverEnded: Latch<Int>
    let senderStopped: Latch<Int>
    private let channel: any Channel
    /// The adopted descriptor (the channel's), read for a diagnosis only.
    private let fd: Int32

    /// Adopts the connected descriptor `fd` (the channel closes it).
    init(
        fd: Int32,
        stream: SimulatedStream,
        plaintextSent: Int,
        plaintextReceived: Int,
        context: NIOSSLContext
    ) async throws {
        let (state, receiverEnded, senderStopped) = (LockedBox(StreamingPeer.State()), Latch<Int>(), Latch<Int>())
        (self.state, self.receiverEnded, self.senderStopped) = (state, receiverEnded, senderStopped)
        self.fd = fd
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture(withResultOf: {
                    let handler = TLSStreamingPeerHandler(
                        stream: stream,
                        plaintextSent: plaintextSent,
                        plaintextReceived: plaintextReceived,
                        sslContext: context,
                        state: state,
                        receiverEnded: receiverEnded,
                        senderStopped: senderStopped
                    )
                    if plaintextSent == 0 && plaintextReceived == 0 {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                        handler.switched = true
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                })
            }
            .withConnectedSocket(fd).get()
    }

    func start(seed: UInt64, limit: Int?) {
        let channel = channel
        channel.eventLoop.execute {
            try? channel.pipeline.syncOperations.handler(type: TLSStreamingPeerHandler.self)
                .startSending(seed: seed, limit: limit)
        }
    }

    func stopSending() async throws -> Int {
        let channel = channel
        channel.eventLoop.execute {
            try? channel.pipeline.syncOperations.handler(type: TLSStreamingPeerHandler.self).stopSending()
        }
        return try await senderStopped.wait(timeout: .seconds(10))
    }

    func diagnosis() async -> String {
        let channel = channel
        let own = channel.eventLoop.submit { () -> String in
            let handler = try? channel.pipeline.syncOperations.handler(type: TLSStreamingPeerHandler.self)
            return "peer: channel writable \(channel.isWritable), active \(channel.isActive), "
                + (handler?.diagnosis ?? "no handler")
        }
        let latch = Latch<String>()
        own.whenComplete { latch.set((try? $0.get()) ?? "the peer's loop failed") }
        let peer = (try? await latch.wait(timeout: .seconds(5))) ?? "the peer's loop does not answer"
        let socketEnd = KernelQueues.otherEnd(of: fd).map(KernelQueues.describe) ?? "not found"
        return
            "\(peer); kernel: peer's \(KernelQueues.describe(fd)), socket's \(socketEnd); \(KernelQueues.statistics(fd))"
    }

    func close() async throws {
        try? await channel.close()
        _ = try await receiverEnded.wait(timeout: .seconds(10))
        _ = try await senderStopped.wait(timeout: .seconds(10))
    }
}
