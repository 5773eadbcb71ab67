import NIOCore

extension GCDAsyncUdpSocket {
    /// The receive side of one socket life as a value: datagrams in, the one to deliver next out. No I/O, so tests
    /// drive it directly.
    ///
    /// Holds the original's rules: the two receive modes switch each other, receive-once stops after one delivered
    /// datagram, a datagram read beyond it waits for the next receive (never dropped), a connected socket ignores
    /// other senders, and one datagram at a time is with an asynchronous filter.
    struct ReceiveQueue {
        /// Datagrams held before the engine stops reading (the kernel keeps the rest).
        static let readLimit = 64

        private(set) var mode = ReceiveMode.off
        private(set) var buffered = CircularBuffer<AddressedEnvelope<ByteBuffer>>()
        private(set) var isFiltering = false
        /// The connected peer; datagrams from anyone else are dropped.
        var connectedPeer: SocketAddress?

        /// Whether the engine should read from the kernel now.
        var wantsReads: Bool { mode != .off && buffered.count < Self.readLimit }

        /// `receiveOnce`, `beginReceiving` or `pauseReceiving`.
        mutating func setMode(_ newMode: ReceiveMode) {
            mode = newMode
        }

        /// A datagram arrived; returns false when it was dropped (another sender than the connected peer).
        @discardableResult
        mutating func arrived(_ datagram: AddressedEnvelope<ByteBuffer>) -> Bool {
            if let connectedPeer, datagram.remoteAddress != connectedPeer { return false }
            buffered.append(datagram)
            return true
        }

        /// The next datagram to filter or deliver, taken out of the buffer; nil while receiving is off, a filter is
        /// running, or nothing is buffered.
        mutating func next() -> AddressedEnvelope<ByteBuffer>? {
            guard mode != .off, !isFiltering else { return nil }
            return buffered.popFirst()
        }

        /// An asynchronous filter started on the datagram `next()` returned: nothing else is taken until it ends.
        mutating func filterStarted() {
            isFiltering = true
        }

        /// The asynchronous filter answered.
        mutating func filterEnded() {
            isFiltering = false
        }

        /// A datagram reached the delegate: receive-once mode ends.
        mutating func delivered() {
            if mode == .once { mode = .off }
        }

        /// The life ended: everything buffered is dropped (the caller's own close).
        mutating func removeAll() {
            buffered.removeAll()
            mode = .off
        }
    }
}
