/// The life of a delegate-face socket as a value: events in, verdicts out. No I/O, so tests drive it directly.
///
/// Mirrors the original's observable flags (as CocoaAsyncSocket's `isConnected`/`isDisconnected` report them): a
/// socket is started by `connect`/`accept` (or by being accepted), may be told to disconnect after its queues drain, and is closed exactly once per life; a closed
/// socket can be started again.
struct SocketLifecycle: Equatable {
    enum Phase: Equatable {
        case idle
        case connecting
        case connected
        case listening
        case closing(wasConnected: Bool)
        case closed
    }

    private(set) var phase = Phase.idle
    /// Bumped at every start, so that events of an earlier life are recognised and ignored.
    private(set) var life: UInt64 = 0

    /// `isDisconnected`: not started, or closed.
    var isDisconnected: Bool { phase == .idle || phase == .closed }

    /// `isConnected`: the TCP connection is established (false for listeners).
    var isConnected: Bool {
        switch phase {
        case .connected: true
        case .closing(let wasConnected): wasConnected
        default: false
        }
    }

    /// Whether reads, writes and `startTLS` are taken into the queues now.
    var acceptsOperations: Bool { phase == .connecting || phase == .connected }

    /// A start (`connect`, `accept`, adoption) is allowed only on a disconnected socket.
    var canStart: Bool { isDisconnected }

    /// Starts a connecting life; returns its number.
    mutating func startConnecting() -> UInt64 {
        precondition(canStart)
        life &+= 1
        phase = .connecting
        return life
    }

    /// Starts a life that is connected at once (accepted or adopted socket).
    mutating func startConnected() -> UInt64 {
        precondition(canStart)
        life &+= 1
        phase = .connected
        return life
    }

    /// Starts a listening life.
    mutating func startListening() -> UInt64 {
        precondition(canStart)
        life &+= 1
        phase = .listening
        return life
    }

    /// The connection of `life` is established. False when that life is over (a late connect is to be closed).
    mutating func connectionEstablished(life: UInt64) -> Bool {
        guard life == self.life else { return false }
        switch phase {
        case .connecting:
            phase = .connected
            return true
        case .closing(wasConnected: false):
            phase = .closing(wasConnected: true)
            return true
        default:
            return false
        }
    }

    /// `disconnectAfter…`: new operations are refused from now on. False when there is nothing to close.
    mutating func closeRequestedAfterIO() -> Bool {
        switch phase {
        case .connecting, .connected:
            phase = .closing(wasConnected: phase == .connected)
            return true
        default:
            return false
        }
    }

    /// The life `life` ended. True when this ends a started life, i.e. exactly one `socketDidDisconnect` is due.
    mutating func ended(life: UInt64) -> Bool {
        guard life == self.life else { return false }
        switch phase {
        case .idle, .closed:
            return false
        default:
            phase = .closed
            return true
        }
    }

    /// Whether events stamped with `life` still belong to the current, open life.
    func isCurrent(life: UInt64) -> Bool {
        life == self.life && !isDisconnected
    }
}
