/// The original's `disconnectAfterReading` / `disconnectAfterWriting` requests: close once these queues drain.
struct TCPCloseAfter: OptionSet, Equatable {
    let rawValue: UInt8
    /// Once the read queue is empty.
    static let reads = TCPCloseAfter(rawValue: 1)
    /// Once the write queue is empty.
    static let writes = TCPCloseAfter(rawValue: 2)
}
