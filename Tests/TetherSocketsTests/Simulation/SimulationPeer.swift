import TetherConcurrency

/// The far end of a simulated delegate-face connection, plain (``StreamingPeer``) or TLS (``TLSStreamingPeer``):
/// it streams the simulated bytes in chunks and pauses drawn from a seed and checks every byte the socket writes.
protocol SimulationPeer: AnyObject, Sendable {
    /// What it sent and received, and how the socket's side ended.
    var state: LockedBox<StreamingPeer.State> { get }
    /// The receiver's count, once the socket's side ended (or the peer closed).
    var receiverEnded: Latch<Int> { get }
    /// Starts streaming; sends `limit` bytes and then ends its side (nil: until stopped).
    func start(seed: UInt64, limit: Int?)
    /// Stops the sender; returns how many bytes it sent in all.
    func stopSending() async throws -> Int
    /// Ends the peer and closes its descriptor (once).
    func close() async throws
    /// Where the peer's bytes are, for a schedule that hung: the peer's own state and both ends' kernel queues.
    func diagnosis() async -> String
}

extension StreamingPeer: SimulationPeer {
    func diagnosis() async -> String {
        let (sent, stopRequested, sendFailed) = state.withLock { ($0.sent, $0.stopRequested, $0.sendFailed) }
        let socketEnd = KernelQueues.otherEnd(of: fd).map(KernelQueues.describe) ?? "not found"
        return "peer: sent \(sent), stop requested \(stopRequested), send failed \(sendFailed); "
            + "kernel: peer's \(KernelQueues.describe(fd)), socket's \(socketEnd); \(KernelQueues.statistics(fd))"
    }
}
