import NIOCore
import NIOPosix

/// The engine beneath Tether doing each case's work: NIO channel handlers on the event loop, nothing more.
enum EngineWorkloads {
    static let group = MultiThreadedEventLoopGroup.singleton
    static let message = ByteBuffer(repeating: 0x42, count: 64)

    /// A connection opened, 64 bytes each way, closed (both ends).
    static func connection(_ peers: PeerServers) -> Workload {
        Workload {
            WorkloadSession {
                let target = peers.tally.closed + 1
                let channel = try await ClientBootstrap(group: group)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                        }
                    }
                    .connect(host: "127.0.0.1", port: peers.echoPort).get()
                try await channel.closeFuture.get()
                await peers.tally.waitUntilClosed(target)
            }
        }
    }

    /// `batch` round trips of 64 bytes on a warm connection, each written when the last reply is in.
    static func pingPong(_ peers: PeerServers, batch: Int) -> Workload {
        Workload {
            let channel = try await ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            RoundTripHandler<ByteBuffer, ByteBuffer>(message: message) { $0.readableBytes }
                        )
                    }
                }
                .connect(host: "127.0.0.1", port: peers.echoPort).get()
            return session(
                channel,
                handler: RoundTripHandler<ByteBuffer, ByteBuffer>.self,
                messages: batch,
                unitsPerMessage: message.readableBytes
            )
        }
    }

    /// `batch` datagrams of 64 bytes sent and echoed, each sent when the last came back.
    static func datagram(_ peers: PeerServers, batch: Int) -> Workload {
        Workload {
            let peer = try SocketAddress(ipAddress: "127.0.0.1", port: peers.udpPort)
            let envelope = AddressedEnvelope(remoteAddress: peer, data: message)
            let channel = try await DatagramBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Datagrams(message: envelope) { _ in 1 })
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            return session(channel, handler: Datagrams.self, messages: batch, unitsPerMessage: 1)
        }
    }

    /// `batch` STX frames decoded by a hand-written `ByteToMessageDecoder` in the pipeline: one byte asks the peer
    /// for `batch` frames.
    static func frames(_ peers: PeerServers, batch: Int) -> Workload {
        Workload {
            let channel = try await ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HandWrittenSTXDecoder()))
                        try channel.pipeline.syncOperations.addHandler(
                            RoundTripHandler<ByteBuffer, ByteBuffer>(message: ByteBuffer(bytes: [0x01])) { _ in 1 }
                        )
                    }
                }
                .connect(host: "127.0.0.1", port: peers.framePort).get()
            // One byte out, `batch` frames back (one per read), `batch` operations.
            let session = session(
                channel,
                handler: RoundTripHandler<ByteBuffer, ByteBuffer>.self,
                messages: 1,
                unitsPerMessage: batch
            )
            return WorkloadSession(operationsPerCall: batch, operation: session.operation, end: session.end)
        }
    }

    typealias Datagrams = RoundTripHandler<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>

    /// Each call runs `messages` round trips of the channel's `handler`.
    private static func session<In, Out>(
        _ channel: any Channel,
        handler: RoundTripHandler<In, Out>.Type,
        messages: Int,
        unitsPerMessage: Int
    ) -> WorkloadSession {
        WorkloadSession(
            operationsPerCall: messages,
            operation: {
                try await channel.eventLoop.flatSubmit {
                    let promise = channel.eventLoop.makePromise(of: Void.self)
                    do {
                        try channel.pipeline.syncOperations.handler(type: handler)
                            .start(messages: messages, unitsPerMessage: unitsPerMessage, done: promise)
                    } catch {
                        promise.fail(error)
                    }
                    return promise.futureResult
                }.get()
            },
            end: { try await channel.close() }
        )
    }
}
