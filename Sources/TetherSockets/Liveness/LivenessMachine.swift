import NIOCore

/// The idle detector and the heartbeat of one connection as a value: events in (started, bytes read, a write
/// completed, a timer fired, the application confirmed a reply), actions out (arm or cancel a timer, report an idle
/// event, send the ping, close). No I/O and no clock of its own: every event carries the time, so tests drive it as a
/// table (`LivenessMachineTests`).
///
/// Idle semantics are SwiftNIO's `IdleStateHandler`'s: a timer fires `timeout` after the last activity of its kind;
/// if there was activity since, it is re-armed for `last activity + timeout`; otherwise the event is reported and the
/// timer re-armed for a full `timeout`. Reads and writes only record the time, they arm nothing.
///
/// The heartbeat is a write-idle timer of its own: when it finds the connection write-idle for `interval` and no
/// ping is out, it asks for the ping and arms the reply deadline. The reply (any read, or the application's
/// confirmation) cancels the deadline; the deadline firing asks for the close. Timers carry an id: a fire whose id is
/// not the current one (cancelled, re-armed) is ignored.
struct LivenessMachine: Equatable {
    struct HeartbeatPlan: Equatable {
        var interval: TimeAmount
        var timeout: TimeAmount
        /// Only the application's confirmation counts as the reply (not any read).
        var confirmsReply: Bool
    }

    struct Configuration: Equatable {
        var readIdle: TimeAmount?
        var writeIdle: TimeAmount?
        var allIdle: TimeAmount?
        var heartbeat: HeartbeatPlan?

        var isEmpty: Bool { readIdle == nil && writeIdle == nil && allIdle == nil && heartbeat == nil }
    }

    enum Timer: Hashable, CaseIterable {
        case readIdle
        case writeIdle
        case allIdle
        /// The heartbeat's write-idle timer.
        case ping
        /// The reply deadline of the ping that is out.
        case reply
    }

    enum Action: Equatable {
        case arm(Timer, id: UInt64, deadline: NIODeadline)
        case cancel(Timer)
        case report(IdleStateEvent)
        case sendPing
        case closeForMissingReply
    }

    private(set) var configuration = Configuration()
    private(set) var isRunning = false
    private(set) var lastRead = NIODeadline.uptimeNanoseconds(0)
    private(set) var lastWrite = NIODeadline.uptimeNanoseconds(0)
    /// When the ping that is out was sent; nil when none is.
    private(set) var pingSent: NIODeadline?
    /// The id of each armed timer.
    private(set) var armed: [Timer: UInt64] = [:]
    private var lastTimerID: UInt64 = 0

    // MARK: events

    /// The connection is established: the configured timers start from now.
    mutating func start(now: NIODeadline) -> [Action] {
        guard !isRunning else { return [] }
        isRunning = true
        lastRead = now
        lastWrite = now
        return armConfigured(now: now)
    }

    /// New settings: every timer stops, and while running the new ones start from now (a ping that is out is
    /// forgotten).
    mutating func configure(_ configuration: Configuration, now: NIODeadline) -> [Action] {
        var actions = cancelAll()
        self.configuration = configuration
        pingSent = nil
        if isRunning {
            lastRead = now
            lastWrite = now
            actions += armConfigured(now: now)
        }
        return actions
    }

    /// Bytes were received.
    mutating func read(now: NIODeadline) -> [Action] {
        guard isRunning else { return [] }
        lastRead = now
        guard pingSent != nil, let heartbeat = configuration.heartbeat, !heartbeat.confirmsReply else { return [] }
        return replyArrived()
    }

    /// A write completed: its bytes were handed to the kernel.
    mutating func wrote(now: NIODeadline) -> [Action] {
        guard isRunning else { return [] }
        lastWrite = now
        return []
    }

    /// The application recognised the reply to the ping.
    mutating func replyConfirmed() -> [Action] {
        guard isRunning, pingSent != nil else { return [] }
        return replyArrived()
    }

    /// Timer `timer` armed with `id` fired at `now`.
    mutating func timerFired(_ timer: Timer, id: UInt64, now: NIODeadline) -> [Action] {
        guard isRunning, armed[timer] == id else { return [] }
        armed[timer] = nil
        switch timer {
        case .readIdle:
            return idleCheck(timer, timeout: configuration.readIdle, last: lastRead, event: .read, now: now)
        case .writeIdle:
            return idleCheck(timer, timeout: configuration.writeIdle, last: lastWrite, event: .write, now: now)
        case .allIdle:
            return idleCheck(
                timer,
                timeout: configuration.allIdle,
                last: max(lastRead, lastWrite),
                event: .all,
                now: now
            )
        case .ping:
            guard let heartbeat = configuration.heartbeat else { return [] }
            let due = lastWrite + heartbeat.interval
            guard pingSent == nil, due <= now else {
                // Written since (or a ping is out, whose own write moves `lastWrite`): look again an interval after
                // the last write, or a full interval from now.
                return [arm(.ping, deadline: pingSent == nil ? due : now + heartbeat.interval)]
            }
            pingSent = now
            return [
                .sendPing, arm(.reply, deadline: now + heartbeat.timeout),
                arm(.ping, deadline: now + heartbeat.interval),
            ]
        case .reply:
            guard pingSent != nil else { return [] }
            var actions = cancelAll()
            isRunning = false
            pingSent = nil
            actions.append(.closeForMissingReply)
            return actions
        }
    }

    /// The connection ended: every timer stops.
    mutating func stop() -> [Action] {
        guard isRunning else { return [] }
        isRunning = false
        pingSent = nil
        return cancelAll()
    }

    // MARK: helpers

    private mutating func idleCheck(
        _ timer: Timer,
        timeout: TimeAmount?,
        last: NIODeadline,
        event: IdleStateEvent,
        now: NIODeadline
    ) -> [Action] {
        guard let timeout else { return [] }
        let due = last + timeout
        // Re-armed first: the report may end the connection (a face that closes inline), which stops the machine.
        if due <= now { return [arm(timer, deadline: now + timeout), .report(event)] }
        return [arm(timer, deadline: due)]
    }

    private mutating func replyArrived() -> [Action] {
        pingSent = nil
        guard armed.removeValue(forKey: .reply) != nil else { return [] }
        return [.cancel(.reply)]
    }

    private mutating func armConfigured(now: NIODeadline) -> [Action] {
        var actions: [Action] = []
        if let read = configuration.readIdle { actions.append(arm(.readIdle, deadline: now + read)) }
        if let write = configuration.writeIdle { actions.append(arm(.writeIdle, deadline: now + write)) }
        if let all = configuration.allIdle { actions.append(arm(.allIdle, deadline: now + all)) }
        if let heartbeat = configuration.heartbeat { actions.append(arm(.ping, deadline: now + heartbeat.interval)) }
        return actions
    }

    private mutating func arm(_ timer: Timer, deadline: NIODeadline) -> Action {
        lastTimerID &+= 1
        armed[timer] = lastTimerID
        return .arm(timer, id: lastTimerID, deadline: deadline)
    }

    private mutating func cancelAll() -> [Action] {
        let actions = Timer.allCases.filter { armed[$0] != nil }.map { Action.cancel($0) }
        armed.removeAll()
        return actions
    }
}
