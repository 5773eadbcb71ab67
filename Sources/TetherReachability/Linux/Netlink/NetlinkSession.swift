#if os(Linux)
import CTetherNetlink

/// The netlink back-end's protocol state: which dumps are queued or in flight, and the routing state the
/// messages build. A value driven by messages in, actions out; the monitor does the I/O.
///
/// One socket carries both the dump replies and the multicast events, in the order the kernel produced them, so
/// applying everything in arrival order converges on the kernel's state. Each dump clears its part of the state
/// when it is requested.
struct NetlinkSession: Sendable {
    /// The four state dumps, in the order they are run.
    enum Dump: Sendable, Hashable, CaseIterable {
        case links, addresses, routes, rules
    }

    /// What the monitor must do.
    enum Action: Sendable, Hashable {
        /// Send this dump request.
        case send(NetlinkMessage)
    }

    /// What one received message did.
    struct Outcome: Sendable {
        var changed = false
        var actions: [Action] = []
        var error: NetworkReachabilityError?
    }

    private(set) var state = RoutingState()
    private var queued: [Dump] = []
    private var inFlight: (dump: Dump, sequence: UInt32, interrupted: Bool)?
    private var nextSequence: UInt32
    private var repeatedInterruptedDumps: [Dump: Int] = [:]
    private let portID: UInt32

    /// How many times in a row an interrupted dump runs again; on a table that never stops changing, the state
    /// is then taken as it is rather than never evaluated.
    static let maximumRepeatedInterruptedDumps = 3

    /// Creates a session for the socket bound to `portID`.
    init(portID: UInt32, firstSequence: UInt32 = 1) {
        self.portID = portID
        nextSequence = firstSequence
    }

    /// No dump queued or in flight: the state is complete.
    var isSynchronised: Bool { inFlight == nil && queued.isEmpty }

    /// Queues links, addresses, routes and rules (at start, and after an overrun lost events).
    mutating func requestFullDump() -> [Action] {
        for dump in Dump.allCases where !queued.contains(dump) {
            queued.append(dump)
        }
        return startNextDump()
    }

    /// Applies one message from the socket.
    mutating func receive(_ message: NetlinkMessage) -> Outcome {
        var outcome = Outcome()
        // Events caused by another process's request carry that request's sequence number and port; replies to
        // our dumps carry our port.
        let isReplyToDump = inFlight?.sequence == message.sequence && message.portID == portID
        if isReplyToDump, Int32(message.flags) & NLM_F_DUMP_INTR != 0 {
            inFlight?.interrupted = true
        }
        switch Int32(message.type) {
        case NLMSG_DONE where isReplyToDump:
            finishDump()
            outcome.actions = startNextDump()
            outcome.changed = true
            return outcome
        case NLMSG_ERROR where isReplyToDump:
            let code =
                message.payload.count >= 4 ? message.payload.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) } : 0
            if code != 0 {
                // The kernel sends a negated errno; `-code` traps on Int32.min (found by `FuzzNetlink`).
                let number = Int32(clamping: -Int64(code))
                outcome.error = .posix(.backendFailed, "netlink dump request refused", errno: number)
            }
            finishDump()
            outcome.actions = startNextDump()
            outcome.changed = true
            return outcome
        case NLMSG_NOOP, NLMSG_DONE, NLMSG_ERROR, NLMSG_OVERRUN:
            return outcome
        default:
            break
        }
        guard let change = RoutingChange(message) else { return outcome }
        apply(change)
        outcome.changed = true
        if change.flushesRoutesSilently {
            // The kernel drops IPv4 routes of a downed link or a removed address without a message: ask again.
            outcome.actions = requestDump(.routes)
        }
        return outcome
    }

    private mutating func apply(_ change: RoutingChange) {
        switch change {
        case .link(let link): state.updateLink(link)
        case .linkRemoved(let index): state.removeLink(index: index)
        case .address(let address): state.addAddress(address)
        case .addressRemoved(let address): state.removeAddress(address)
        case .route(let route, let replacing): state.addRoute(route, replacing: replacing)
        case .routeRemoved(let route): state.removeRoute(route)
        case .rule(let rule): state.addRule(rule)
        case .ruleRemoved(let rule): state.removeRule(rule)
        }
    }

    private mutating func requestDump(_ dump: Dump) -> [Action] {
        if !queued.contains(dump) {
            queued.append(dump)
        }
        return startNextDump()
    }

    private mutating func finishDump() {
        guard let finished = inFlight else { return }
        inFlight = nil
        let repeated = repeatedInterruptedDumps[finished.dump, default: 0]
        if finished.interrupted, repeated < Self.maximumRepeatedInterruptedDumps {
            // NLM_F_DUMP_INTR: the table changed while it was dumped; the dump may be inconsistent.
            repeatedInterruptedDumps[finished.dump] = repeated + 1
            if !queued.contains(finished.dump) {
                queued.append(finished.dump)
            }
        } else {
            repeatedInterruptedDumps[finished.dump] = 0
        }
    }

    private mutating func startNextDump() -> [Action] {
        guard inFlight == nil, !queued.isEmpty else { return [] }
        let dump = queued.removeFirst()
        let sequence = nextSequence
        nextSequence &+= 1
        if nextSequence == 0 { nextSequence = 1 }
        inFlight = (dump, sequence, false)
        switch dump {
        case .links: state.removeAllLinks()
        case .addresses: state.removeAllAddresses()
        case .rules: state.removeAllRules()
        case .routes: state.removeAllRoutes()
        }
        return [.send(Self.request(dump, sequence: sequence, portID: portID))]
    }

    /// The `NLM_F_REQUEST | NLM_F_DUMP` request for `dump`, for all address families.
    static func request(_ dump: Dump, sequence: UInt32, portID: UInt32) -> NetlinkMessage {
        let type: Int32
        let headerSize: Int
        switch dump {
        case .links:
            type = Int32(RTM_GETLINK)
            headerSize = MemoryLayout<ifinfomsg>.size
        case .addresses:
            type = Int32(RTM_GETADDR)
            headerSize = MemoryLayout<ifaddrmsg>.size
        case .rules:
            type = Int32(RTM_GETRULE)
            headerSize = MemoryLayout<fib_rule_hdr>.size
        case .routes:
            type = Int32(RTM_GETROUTE)
            headerSize = MemoryLayout<rtmsg>.size
        }
        return NetlinkMessage(
            type: UInt16(type),
            flags: UInt16(NLM_F_REQUEST | NLM_F_DUMP),
            sequence: sequence,
            portID: portID,
            payload: [UInt8](repeating: 0, count: Int(tether_nlmsg_align(UInt32(headerSize))))
        )
    }
}

extension RoutingChange {
    /// Whether the kernel may have removed IPv4 routes along with this change without announcing them.
    var flushesRoutesSilently: Bool {
        switch self {
        case .link(let link): link.flags & RoutingState.Link.flagUp == 0
        case .linkRemoved, .addressRemoved: true
        case .address, .route, .routeRemoved, .rule, .ruleRemoved: false
        }
    }
}
#endif
