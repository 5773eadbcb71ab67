import NIOCore

/// Feeds the async sequence from the engine: yields each datagram and turns the sequence's demand into reads.
final class AsyncFaceUDPOwner: UDPEngineOwner {
    let source: UDPSocket.Producer.Source
    weak var engine: UDPEngine?

    init(source: UDPSocket.Producer.Source) {
        self.source = source
    }

    func engine(_ engine: UDPEngine, didReceive datagram: AddressedEnvelope<ByteBuffer>) {
        let result = source.yield(Datagram(remoteAddress: datagram.remoteAddress, data: Self.sized(datagram.data)))
        switch result {
        case .produceMore: break
        case .stopProducing: engine.wantsReads = false
        case .dropped: engine.wantsReads = false
        }
    }

    /// The datagram in a buffer of its own size when it holds less than half the receive buffer it arrived in: a
    /// buffered datagram then holds its bytes, not the engine's 64 KiB receive buffer.
    static func sized(_ data: ByteBuffer) -> ByteBuffer {
        guard data.capacity / 2 > data.readableBytes else { return data }
        var copy = ByteBufferAllocator().buffer(capacity: data.readableBytes)
        copy.writeImmutableBuffer(data)
        return copy
    }

    func engineDidClose(_ engine: UDPEngine, error: (any Error)?) {
        if let error {
            source.finish(GCDAsyncSocketError.wrapping(error, function: "recvmsg"))
        } else {
            source.finish()
        }
    }
}
