/// Decides which evaluations a manager delivers, and when: the first after each start at once; later ones when
/// their status or egress interface differs from the last delivered; with a debounce window, the changes inside one
/// window coalesced into one delivery of the final path when the window closes (none when it ends where it began).
///
/// A value with no clock and no queue: the manager feeds it evaluations and timer firings with the time, and executes
/// the actions it returns (tested as a table on a manual clock).
struct DeliveryDebouncer<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    /// What the manager must do.
    enum Action: Equatable, Sendable {
        /// Deliver this path now.
        case deliver(NetworkPath)
        /// Call ``timerFired(id:)`` with this ID at this instant.
        case armTimer(id: UInt64, deadline: Instant)
    }

    /// What makes two evaluations different for delivery: the status or the egress interface.
    struct Key: Hashable, Sendable {
        var status: NetworkReachabilityStatus
        var interfaceName: String?

        init(_ path: NetworkPath) {
            status = path.status
            interfaceName = path.interfaceName
        }
    }

    /// How long changes are gathered before one delivery; zero delivers each change at once.
    var window: Duration
    private var lastDelivered: Key?
    private var pending: (path: NetworkPath, timerID: UInt64)?
    private var nextTimerID: UInt64 = 1

    init(window: Duration = .zero) {
        self.window = window
    }

    /// Forgets what was delivered (a new start): the next evaluation is delivered at once. A pending window's timer
    /// is ignored when it fires.
    mutating func reset() {
        lastDelivered = nil
        pending = nil
    }

    /// An evaluation arrived at `now`.
    mutating func evaluated(_ path: NetworkPath, at now: Instant) -> [Action] {
        let key = Key(path)
        guard let lastDelivered else {
            self.lastDelivered = key
            return [.deliver(path)]
        }
        if pending != nil {
            pending?.path = path
            return []
        }
        guard key != lastDelivered else { return [] }
        guard window > .zero else {
            self.lastDelivered = key
            return [.deliver(path)]
        }
        let id = nextTimerID
        nextTimerID &+= 1
        pending = (path, id)
        return [.armTimer(id: id, deadline: now.advanced(by: window))]
    }

    /// The timer `id` fired: a window closes and its final path is delivered if it differs from the last delivered.
    mutating func timerFired(id: UInt64) -> [Action] {
        guard let pending, pending.timerID == id else { return [] }
        self.pending = nil
        let key = Key(pending.path)
        guard key != lastDelivered else { return [] }
        lastDelivered = key
        return [.deliver(pending.path)]
    }
}
