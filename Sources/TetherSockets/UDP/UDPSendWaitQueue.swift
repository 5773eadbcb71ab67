import NIOCore

/// The datagrams waiting in a ``UDPSendGate`` for room in the kernel, oldest first, each with the promise its sender
/// waits on and a number that withdraws it.
struct UDPSendWaitQueue {
    struct Entry {
        var token: UInt64
        var envelope: AddressedEnvelope<ByteBuffer>
        var promise: EventLoopPromise<Void>
        /// Run under the gate's lock when the kernel takes the datagram.
        var whenTaken: (@Sendable () -> Void)?
    }

    private var entries = CircularBuffer<Entry>()
    private var lastToken: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var first: Entry? { entries.first }

    /// Queues a datagram behind the others; returns its number.
    mutating func append(
        _ envelope: AddressedEnvelope<ByteBuffer>,
        promise: EventLoopPromise<Void>,
        whenTaken: (@Sendable () -> Void)?
    ) -> UInt64 {
        lastToken &+= 1
        entries.append(Entry(token: lastToken, envelope: envelope, promise: promise, whenTaken: whenTaken))
        return lastToken
    }

    mutating func removeFirst() {
        entries.removeFirst()
    }

    /// Takes datagram `token` out of the queue, if it still waits; returns its promise.
    mutating func remove(_ token: UInt64) -> EventLoopPromise<Void>? {
        guard let index = entries.firstIndex(where: { $0.token == token }) else { return nil }
        return entries.remove(at: index).promise
    }

    /// Empties the queue; returns the promises of the datagrams that waited.
    mutating func removeAll() -> [EventLoopPromise<Void>] {
        defer { entries.removeAll() }
        return entries.map(\.promise)
    }
}
