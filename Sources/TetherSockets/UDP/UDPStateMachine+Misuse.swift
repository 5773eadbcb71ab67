extension UDPStateMachine {
    /// Where a socket stands, as the face sees it under its lock. Calls that throw (bind, connect, receive, a
    /// multicast membership) are answered at once, before anything reaches the loop, so their misuse is decided
    /// here, from this view, rather than by the machine's events.
    enum Phase {
        /// No sockets: a fresh instance, or closed.
        case none
        /// Sockets made (by `enableBroadcast`, `enableReusePort`, a multicast option), not bound yet.
        case created
        case bound
        /// A connect was asked for and has not answered.
        case connecting
        case connected
    }

    /// A call the face checks before acting.
    enum Call {
        /// Creating the sockets (bind, connect, the first send, an option that needs them).
        case createSockets
        case bind
        case connect
        case receive
        case changeMembership(join: Bool)
    }

    /// What the checks read.
    struct FaceView {
        var phase: Phase
        var hasDelegate = true
        /// A delegate queue, or event-loop delivery.
        var hasDeliveryTarget = true
        /// IPv4 or IPv6 is enabled.
        var hasEnabledFamily = true
    }

    /// The error the original answers `call` with in `view`, nil when the call may go on.
    static func misuse(of call: Call, in view: FaceView) -> GCDAsyncUdpSocketError? {
        switch call {
        case .createSockets:
            guard view.phase == .none else { return nil }
            return delegateMisuse(view) ?? familyMisuse(view)
        case .bind:
            if let error = delegateMisuse(view) ?? familyMisuse(view) { return error }
            switch view.phase {
            case .none, .created: return nil
            case .bound, .connecting, .connected:
                // Connect binds first, so a connected socket is refused as bound.
                return .badConfig("Cannot bind a socket more than once.")
            }
        case .connect:
            if let error = delegateMisuse(view) { return error }
            switch view.phase {
            case .connecting, .connected: return .badConfig("Cannot connect a socket more than once.")
            case .none, .created, .bound: return misuse(of: .createSockets, in: view)
            }
        case .receive:
            guard view.phase != .none else {
                return .badConfig(
                    "Must bind socket before you can receive data. You can do this explicitly via bind, or "
                        + "implicitly via connect or by sending data."
                )
            }
            return nil
        case .changeMembership(let join):
            let verb = join ? "join" : "leave"
            switch view.phase {
            case .none, .created: return .badConfig("Must bind a socket before \(verb)ing a multicast group.")
            case .connecting, .connected: return .badConfig("Cannot \(verb) a multicast group if connected.")
            case .bound: return nil
            }
        }
    }

    private static func delegateMisuse(_ view: FaceView) -> GCDAsyncUdpSocketError? {
        guard view.hasDelegate else {
            return .badConfig("Attempting to use socket without a delegate. Set a delegate first.")
        }
        guard view.hasDeliveryTarget else {
            return .badConfig("Attempting to use socket without a delegate queue. Set a delegate queue first.")
        }
        return nil
    }

    private static func familyMisuse(_ view: FaceView) -> GCDAsyncUdpSocketError? {
        guard view.hasEnabledFamily else {
            return .badConfig("Both IPv4 and IPv6 have been disabled. Must enable at least one protocol first.")
        }
        return nil
    }
}
