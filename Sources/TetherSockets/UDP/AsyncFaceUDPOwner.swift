import NIOCore

/// Feeds the async sequence from the engine: yields each datagram and turns the sequence's demand into reads.
final class AsyncFaceUDPOwner: UDPEngineOwner {
    let source: UDPSocket.Producer.Source
    weak var engine: UDPEngine?

    init(source: UDPSocket.Producer.Source) {
        self.source = source
    }

    func engine(_ engine: UDPEngine, didReceive datagram: AddressedEnvelope<ByteBuffer>) {
        let result = source.yield(Datagram(remoteAddress: datagram.remoteAddress, data: datagram.data))
        switch result {
        case .produceMore: break
        case .stopProducing: engine.wantsReads = false
        case .dropped: engine.wantsReads = false
        }
    }

    func engineDidClose(_ engine: UDPEngine, error: (any Error)?) {
        if let error {
            source.finish(GCDAsyncSocketError.wrapping(error, function: "recvmsg"))
        } else {
            source.finish()
        }
    }
}
