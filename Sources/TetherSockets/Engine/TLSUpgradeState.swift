/// Where a connection's one TLS upgrade stands: a small machine inside ``TCPStateMachine``.
///
/// `startTLS` puts a marker (the barrier) in both queues; the handshake starts once every read and write queued
/// before it completed, after the context is fetched (built off the loop when not cached). Operations queued after
/// the marker wait until the connection is secure.
enum TLSUpgradeState: Equatable {
    /// No upgrade asked for.
    case none
    /// Asked for: waits for the queues to reach the marker.
    case requested(barrier: UInt64)
    /// The queues reached the marker: the context is being fetched.
    case preparing(barrier: UInt64)
    /// The TLS handler is in the pipeline; `trustRejected` once a manual evaluation said no.
    case handshaking(barrier: UInt64, trustRejected: Bool)
    /// The handshake completed (one upgrade per connection).
    case secured

    /// Operations queued after this id wait for the handshake; nil when none do.
    var barrier: UInt64? {
        switch self {
        case .requested(let barrier), .preparing(let barrier), .handshaking(let barrier, _): return barrier
        case .none, .secured: return nil
        }
    }

    /// An upgrade is under way (asked for and not yet secure).
    var isPending: Bool { barrier != nil }
}
