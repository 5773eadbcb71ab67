import NIOCore

/// The delegate face's FIFO of packets (sends and connects) as a value: packets in, each with an id, the head out.
/// One packet is processed at a time, so a connect waits behind the sends queued before it, and the sends after it
/// see its result, as in the original's one queue.
struct UDPSendQueue {
    enum Packet {
        case send(UDPOutgoing)
        case connect(UDPDestination)
    }

    struct Entry {
        /// Unique in its queue; a name lookup started for the packet is known by it.
        var id: UInt64
        var packet: Packet

        /// The name to resolve before the packet can be processed, if any.
        var lookup: (host: String, port: Int)? {
            let destination: UDPDestination?
            switch packet {
            case .send(let outgoing): destination = outgoing.destination
            case .connect(let target): destination = target
            }
            guard case .host(let host, let port) = destination else { return nil }
            return (host, port)
        }
    }

    private(set) var entries = CircularBuffer<Entry>()
    private var lastID: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Queues `packet` behind the others; returns its entry (with its id).
    mutating func append(_ packet: Packet) -> Entry {
        lastID &+= 1
        let entry = Entry(id: lastID, packet: packet)
        entries.append(entry)
        return entry
    }

    /// The packet to process next, taken out of the queue.
    mutating func popFirst() -> Entry? {
        entries.popFirst()
    }

    /// The life ended: queued packets are dropped without callbacks (the caller's own close).
    mutating func removeAll() {
        entries.removeAll()
    }
}
