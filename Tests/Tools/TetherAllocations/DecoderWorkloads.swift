import NIOCore
import NIOEmbedded
import NIOPosix
import TetherCore

/// STX frames decoded by a `ByteToMessageHandler` in an `EmbeddedChannel`, no socket: Tether's `FrameDecoder` or the
/// hand-written decoder. The channel lives on one event loop's thread (an `EmbeddedChannel` is used from one thread).
enum DecoderWorkloads {
    /// `batch` frames of 32-byte payloads, pipelined.
    static func wire(count: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        let codec = STXFrameCodec()
        for index in 0..<count {
            let frame = STXFrame(
                destination: UInt16(truncatingIfNeeded: index),
                source: 1,
                bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            )
            try! codec.encode(frame, into: &buffer)
        }
        return buffer
    }

    static func frameDecoder(on loop: any EventLoop, batch: Int) -> Workload {
        embedded(on: loop, batch: batch, output: STXFrame.self) { ByteToMessageHandler(FrameDecoder(STXFrameCodec())) }
    }

    static func handWritten(on loop: any EventLoop, batch: Int) -> Workload {
        embedded(on: loop, batch: batch, output: ByteBuffer.self) { ByteToMessageHandler(HandWrittenSTXDecoder()) }
    }

    private static func embedded<Output>(
        on loop: any EventLoop,
        batch: Int,
        output: Output.Type,
        handler: @escaping @Sendable () -> any ChannelHandler
    ) -> Workload {
        Workload {
            let wire = wire(count: batch)
            let channel = try await loop.submit { UncheckedBox(EmbeddedChannel(handler: handler())) }.get()
            return WorkloadSession(
                operationsPerCall: batch,
                operation: {
                    try await loop.submit {
                        try channel.value.writeInbound(wire)
                        for _ in 0..<batch {
                            guard try channel.value.readInbound(as: output) != nil else {
                                throw HarnessError("a frame was not decoded")
                            }
                        }
                    }.get()
                },
                end: { try await loop.submit { _ = try channel.value.finish() }.get() }
            )
        }
    }
}
