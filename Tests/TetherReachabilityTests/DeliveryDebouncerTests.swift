import Testing

@testable import TetherReachability

/// A point on a clock that only moves when the test says so.
struct ManualInstant: InstantProtocol, Sendable {
    var offset: Duration

    func advanced(by duration: Duration) -> ManualInstant { ManualInstant(offset: offset + duration) }
    func duration(to other: ManualInstant) -> Duration { other.offset - offset }
    static func < (lhs: ManualInstant, rhs: ManualInstant) -> Bool { lhs.offset < rhs.offset }

    static func at(milliseconds: Int) -> ManualInstant { ManualInstant(offset: .milliseconds(milliseconds)) }
}

struct DeliveryDebouncerTests {
    typealias Debouncer = DeliveryDebouncer<ManualInstant>

    static let ethernet = NetworkPath(
        status: .reachableViaEthernet,
        interfaceName: "eth0",
        interfaceType: .wiredEthernet
    )
    static let wifi = NetworkPath(status: .reachableViaWiFi, interfaceName: "wlan0", interfaceType: .wifi)
    static let vpn = NetworkPath(status: .reachableViaWiFi, interfaceName: "wg0", interfaceType: .other)
    static let offline = NetworkPath(status: .notReachable)

    /// One step: at a time, either an evaluation or a timer firing, and the actions expected.
    enum Step {
        case evaluated(NetworkPath, at: Int, expect: [Debouncer.Action])
        case fired(id: UInt64, expect: [Debouncer.Action])
    }

    static func run(_ debouncer: inout Debouncer, _ steps: [Step]) {
        for (index, step) in steps.enumerated() {
            switch step {
            case .evaluated(let path, let time, let expected):
                let actions = debouncer.evaluated(path, at: .at(milliseconds: time))
                #expect(actions == expected, "step \(index)")
            case .fired(let id, let expected):
                #expect(debouncer.timerFired(id: id) == expected, "step \(index)")
            }
        }
    }

    @Test func withoutAWindowTheFirstEvaluationAndEachChangeAreDeliveredAtOnce() {
        var debouncer = Debouncer()
        Self.run(
            &debouncer,
            [
                .evaluated(Self.ethernet, at: 0, expect: [.deliver(Self.ethernet)]),
                .evaluated(Self.ethernet, at: 1, expect: []),
                .evaluated(Self.offline, at: 2, expect: [.deliver(Self.offline)]),
                .evaluated(Self.ethernet, at: 3, expect: [.deliver(Self.ethernet)]),
            ]
        )
    }

    @Test func changesInsideTheWindowAreDeliveredOnceWithTheFinalStatusWhenItCloses() {
        var debouncer = Debouncer(window: .milliseconds(500))
        Self.run(
            &debouncer,
            [
                .evaluated(Self.ethernet, at: 0, expect: [.deliver(Self.ethernet)]),
                .evaluated(Self.offline, at: 100, expect: [.armTimer(id: 1, deadline: .at(milliseconds: 600))]),
                .evaluated(Self.wifi, at: 200, expect: []),
                .evaluated(Self.vpn, at: 599, expect: []),
                .fired(id: 1, expect: [.deliver(Self.vpn)]),
                // The next change opens a new window.
                .evaluated(Self.offline, at: 700, expect: [.armTimer(id: 2, deadline: .at(milliseconds: 1200))]),
                .fired(id: 2, expect: [.deliver(Self.offline)]),
            ]
        )
    }

    @Test func aFlapThatEndsWhereItBeganIsNotDeliveredAtAll() {
        var debouncer = Debouncer(window: .seconds(1))
        Self.run(
            &debouncer,
            [
                .evaluated(Self.ethernet, at: 0, expect: [.deliver(Self.ethernet)]),
                .evaluated(Self.offline, at: 10, expect: [.armTimer(id: 1, deadline: .at(milliseconds: 1010))]),
                .evaluated(Self.ethernet, at: 20, expect: []),
                .fired(id: 1, expect: []),
                .evaluated(Self.ethernet, at: 2000, expect: []),
            ]
        )
    }

    @Test func theFirstEvaluationAfterAResetIsDeliveredAtOnceAndTheOldWindowsTimerIsIgnored() {
        var debouncer = Debouncer(window: .seconds(1))
        Self.run(
            &debouncer,
            [
                .evaluated(Self.ethernet, at: 0, expect: [.deliver(Self.ethernet)]),
                .evaluated(Self.offline, at: 10, expect: [.armTimer(id: 1, deadline: .at(milliseconds: 1010))]),
            ]
        )
        debouncer.reset()
        Self.run(
            &debouncer,
            [
                .evaluated(Self.wifi, at: 20, expect: [.deliver(Self.wifi)]),
                .fired(id: 1, expect: []),
            ]
        )
    }

    @Test func aChangeOfInterfaceWithTheSameStatusIsAChange() {
        var debouncer = Debouncer()
        Self.run(
            &debouncer,
            [
                .evaluated(Self.wifi, at: 0, expect: [.deliver(Self.wifi)]),
                .evaluated(Self.vpn, at: 1, expect: [.deliver(Self.vpn)]),
            ]
        )
    }
}
