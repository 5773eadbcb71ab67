import NIOCore
import Testing

@testable import TetherSockets

/// A time on the machine's clock, in milliseconds.
private func at(_ milliseconds: Int) -> NIODeadline {
    .uptimeNanoseconds(UInt64(milliseconds) * 1_000_000)
}

private func render(_ action: LivenessMachine.Action) -> String {
    switch action {
    case .arm(let timer, _, let deadline): "arm \(timer) @\(deadline.uptimeNanoseconds / 1_000_000)"
    case .cancel(let timer): "cancel \(timer)"
    case .report(let event): "report \(event)"
    case .sendPing: "send ping"
    case .closeForMissingReply: "close"
    }
}

/// One step of a row: an event at a time.
enum LivenessStep: CustomStringConvertible, Sendable {
    case start(Int)
    case read(Int)
    case wrote(Int)
    case confirm
    /// The timer fires with the id it was last armed with.
    case fire(LivenessMachine.Timer, Int)
    /// The timer fires with an id it no longer has (cancelled or re-armed since).
    case fireStale(LivenessMachine.Timer, Int)
    case stop
    case configure(LivenessRow.Setup, Int)

    var description: String {
        switch self {
        case .start(let t): "start@\(t)"
        case .read(let t): "read@\(t)"
        case .wrote(let t): "wrote@\(t)"
        case .confirm: "confirm"
        case .fire(let timer, let t): "fire \(timer)@\(t)"
        case .fireStale(let timer, let t): "stale \(timer)@\(t)"
        case .stop: "stop"
        case .configure(let setup, let t): "configure \(setup)@\(t)"
        }
    }
}

/// A row: settings, the events in order, and what the machine answers to the last one.
struct LivenessRow: CustomStringConvertible, Sendable {
    enum Setup: String, Sendable {
        /// read 100 ms, write 200 ms, all 300 ms.
        case idle
        /// Heartbeat: interval 100 ms, reply within 50 ms, any byte is the reply.
        case heartbeat
        /// As `heartbeat`, reply within 500 ms.
        case slowReply
        /// As `heartbeat`, only the application's confirmation is the reply.
        case confirmed
    }

    let name: String
    let setup: Setup
    let steps: [LivenessStep]
    let expected: String

    var description: String { name }

    static func configuration(_ setup: Setup) -> LivenessMachine.Configuration {
        func plan(timeout: Int64, confirms: Bool) -> LivenessMachine.HeartbeatPlan {
            .init(interval: .milliseconds(100), timeout: .milliseconds(timeout), confirmsReply: confirms)
        }
        switch setup {
        case .idle:
            return .init(readIdle: .milliseconds(100), writeIdle: .milliseconds(200), allIdle: .milliseconds(300))
        case .heartbeat: return .init(heartbeat: plan(timeout: 50, confirms: false))
        case .slowReply: return .init(heartbeat: plan(timeout: 500, confirms: false))
        case .confirmed: return .init(heartbeat: plan(timeout: 50, confirms: true))
        }
    }
}

struct LivenessMachineTests {
    static let rows: [LivenessRow] = [
        .init(
            name: "starting arms every configured timer from now",
            setup: .idle,
            steps: [.start(0)],
            expected: "arm readIdle @100, arm writeIdle @200, arm allIdle @300"
        ),
        .init(name: "a second start does nothing", setup: .idle, steps: [.start(0), .start(50)], expected: ""),
        .init(
            name: "no read for the timeout reports read-idle and re-arms a full timeout",
            setup: .idle,
            steps: [.start(0), .fire(.readIdle, 100)],
            expected: "arm readIdle @200, report read"
        ),
        .init(
            name: "a read since re-arms at the read plus the timeout, without a report",
            setup: .idle,
            steps: [.start(0), .read(50), .fire(.readIdle, 100)],
            expected: "arm readIdle @150"
        ),
        .init(
            name: "still idle at the next timeout reports again",
            setup: .idle,
            steps: [.start(0), .fire(.readIdle, 100), .fire(.readIdle, 200)],
            expected: "arm readIdle @300, report read"
        ),
        .init(
            name: "a completed write since re-arms the write-idle timer",
            setup: .idle,
            steps: [.start(0), .wrote(150), .fire(.writeIdle, 200)],
            expected: "arm writeIdle @350"
        ),
        .init(
            name: "no write for the timeout reports write-idle",
            setup: .idle,
            steps: [.start(0), .read(150), .fire(.writeIdle, 200)],
            expected: "arm writeIdle @400, report write"
        ),
        .init(
            name: "all-idle counts from the later of the last read and write",
            setup: .idle,
            steps: [.start(0), .read(100), .wrote(250), .fire(.allIdle, 300)],
            expected: "arm allIdle @550"
        ),
        .init(
            name: "neither for the timeout reports all-idle",
            setup: .idle,
            steps: [.start(0), .fire(.allIdle, 300)],
            expected: "arm allIdle @600, report all"
        ),
        .init(
            name: "a timer that was re-armed since ignores its old fire",
            setup: .idle,
            steps: [.start(0), .read(50), .fire(.readIdle, 100), .fireStale(.readIdle, 150)],
            expected: ""
        ),
        .init(
            name: "stopping cancels every armed timer",
            setup: .idle,
            steps: [.start(0), .stop],
            expected: "cancel readIdle, cancel writeIdle, cancel allIdle"
        ),
        .init(
            name: "a fire after stopping is ignored",
            setup: .idle,
            steps: [.start(0), .stop, .fireStale(.readIdle, 100)],
            expected: ""
        ),
        .init(
            name: "reads before the start change nothing",
            setup: .idle,
            steps: [.read(10), .wrote(20)],
            expected: ""
        ),
        .init(
            name: "new settings on a running machine cancel the old timers and start the new from now",
            setup: .idle,
            steps: [.start(0), .configure(.heartbeat, 40)],
            expected: "cancel readIdle, cancel writeIdle, cancel allIdle, arm ping @140"
        ),
        .init(
            name: "write-idle for the interval sends the ping and arms its reply deadline",
            setup: .heartbeat,
            steps: [.start(0), .fire(.ping, 100)],
            expected: "send ping, arm reply @150, arm ping @200"
        ),
        .init(
            name: "a write within the interval postpones the ping",
            setup: .heartbeat,
            steps: [.start(0), .wrote(60), .fire(.ping, 100)],
            expected: "arm ping @160"
        ),
        .init(
            name: "any byte after the ping is the reply",
            setup: .heartbeat,
            steps: [.start(0), .fire(.ping, 100), .read(120)],
            expected: "cancel reply"
        ),
        .init(
            name: "no reply by the deadline closes",
            setup: .heartbeat,
            steps: [.start(0), .fire(.ping, 100), .fire(.reply, 150)],
            expected: "cancel ping, close"
        ),
        .init(
            name: "a deadline cancelled by the reply is ignored when it fires late",
            setup: .heartbeat,
            steps: [.start(0), .fire(.ping, 100), .read(120), .fireStale(.reply, 150)],
            expected: ""
        ),
        .init(
            name: "reads without a ping out are no reply",
            setup: .heartbeat,
            steps: [.start(0), .read(20)],
            expected: ""
        ),
        .init(
            name: "no second ping while one is out",
            setup: .slowReply,
            steps: [.start(0), .fire(.ping, 100), .wrote(101), .fire(.ping, 200)],
            expected: "arm ping @300"
        ),
        .init(
            name: "after the reply the next ping waits an interval after the last write",
            setup: .slowReply,
            steps: [.start(0), .fire(.ping, 100), .wrote(101), .read(130), .fire(.ping, 200)],
            expected: "arm ping @201"
        ),
        .init(
            name: "with confirmation only, a read is no reply",
            setup: .confirmed,
            steps: [.start(0), .fire(.ping, 100), .read(120)],
            expected: ""
        ),
        .init(
            name: "with confirmation only, the confirmation is the reply",
            setup: .confirmed,
            steps: [.start(0), .fire(.ping, 100), .read(120), .confirm],
            expected: "cancel reply"
        ),
        .init(
            name: "a confirmation with no ping out does nothing",
            setup: .confirmed,
            steps: [.start(0), .confirm],
            expected: ""
        ),
        .init(
            name: "with confirmation only, a missing confirmation closes",
            setup: .confirmed,
            steps: [.start(0), .fire(.ping, 100), .read(120), .fire(.reply, 150)],
            expected: "cancel ping, close"
        ),
        .init(
            name: "after the close nothing more happens",
            setup: .heartbeat,
            steps: [.start(0), .fire(.ping, 100), .fire(.reply, 150), .read(160), .confirm, .stop],
            expected: ""
        ),
    ]

    @Test(arguments: rows)
    func machineAnswers(_ row: LivenessRow) {
        var machine = LivenessMachine()
        _ = machine.configure(LivenessRow.configuration(row.setup), now: at(0))
        var last: [LivenessMachine.Action] = []
        for step in row.steps {
            switch step {
            case .start(let t): last = machine.start(now: at(t))
            case .read(let t): last = machine.read(now: at(t))
            case .wrote(let t): last = machine.wrote(now: at(t))
            case .confirm: last = machine.replyConfirmed()
            case .fire(let timer, let t):
                let id = machine.armed[timer]
                #expect(id != nil, "\(timer) is not armed before \(step)")
                last = machine.timerFired(timer, id: id ?? 0, now: at(t))
            case .fireStale(let timer, let t):
                last = machine.timerFired(timer, id: (machine.armed[timer] ?? 0) &+ 1_000, now: at(t))
            case .stop: last = machine.stop()
            case .configure(let setup, let t): last = machine.configure(LivenessRow.configuration(setup), now: at(t))
            }
        }
        #expect(last.map(render).joined(separator: ", ") == row.expected, "after \(row.steps)")
    }

    @Test func everyArmedTimerIsCancelledWhenTheMachineStops() {
        var machine = LivenessMachine()
        var configuration = LivenessRow.configuration(.idle)
        configuration.heartbeat = LivenessRow.configuration(.heartbeat).heartbeat
        _ = machine.configure(configuration, now: at(0))
        _ = machine.start(now: at(0))
        _ = machine.timerFired(.ping, id: machine.armed[.ping] ?? 0, now: at(100))
        #expect(Set(machine.armed.keys) == Set(LivenessMachine.Timer.allCases))
        let cancelled = machine.stop().map(render)
        #expect(cancelled == LivenessMachine.Timer.allCases.map { "cancel \($0)" })
        #expect(machine.armed.isEmpty)
    }
}
