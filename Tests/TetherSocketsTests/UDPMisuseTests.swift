import Testing

@testable import TetherSockets

/// The misuse the face answers at once (bind, connect, receive, multicast membership), as a table of call × phase.
struct UDPMisuseTests {
    typealias Phase = UDPStateMachine.Phase
    typealias Call = UDPStateMachine.Call

    static let phases: [Phase] = [.none, .created, .bound, .connecting, .connected]

    /// call: the message per phase (none, created, bound, connecting, connected); nil: allowed.
    static let table: [(String, Call, [String?])] = [
        ("createSockets", .createSockets, [nil, nil, nil, nil, nil]),
        ("bind", .bind, [nil, nil, "bind more", "bind more", "bind more"]),
        ("connect", .connect, [nil, nil, nil, "connect more", "connect more"]),
        ("receive", .receive, ["receive unbound", nil, nil, nil, nil]),
        (
            "join", .changeMembership(join: true),
            ["join unbound", "join unbound", nil, "join connected", "join connected"]
        ),
        (
            "leave", .changeMembership(join: false),
            ["leave unbound", "leave unbound", nil, "leave connected", "leave connected"]
        ),
    ]

    static let messages: [String: String] = [
        "bind more": "Cannot bind a socket more than once.",
        "connect more": "Cannot connect a socket more than once.",
        "receive unbound":
            "Must bind socket before you can receive data. You can do this explicitly via bind, or implicitly via "
            + "connect or by sending data.",
        "join unbound": "Must bind a socket before joining a multicast group.",
        "leave unbound": "Must bind a socket before leaveing a multicast group.",
        "join connected": "Cannot join a multicast group if connected.",
        "leave connected": "Cannot leave a multicast group if connected.",
    ]

    @Test("call × phase → the original's error, or none", arguments: 0..<table.count)
    func callInEveryPhase(row: Int) {
        let (_, call, expected) = Self.table[row]
        for (phase, key) in zip(Self.phases, expected) {
            let error = UDPStateMachine.misuse(of: call, in: .init(phase: phase))
            #expect(error?.message == key.flatMap { Self.messages[$0] }, "\(Self.table[row].0) in \(phase)")
            #expect(error.map { $0.code == .badConfig } ?? true)
        }
    }

    @Test("without a delegate, a delivery target or an enabled family, sockets are refused before the phase counts")
    func configurationFirst() {
        let noDelegate = UDPStateMachine.FaceView(phase: .bound, hasDelegate: false)
        #expect(
            UDPStateMachine.misuse(of: .bind, in: noDelegate)?.message.hasPrefix("Attempting to use socket") == true
        )
        #expect(UDPStateMachine.misuse(of: .connect, in: noDelegate)?.message.contains("without a delegate.") == true)
        let noQueue = UDPStateMachine.FaceView(phase: .none, hasDeliveryTarget: false)
        #expect(UDPStateMachine.misuse(of: .createSockets, in: noQueue)?.message.contains("delegate queue") == true)
        let noFamily = UDPStateMachine.FaceView(phase: .none, hasEnabledFamily: false)
        #expect(UDPStateMachine.misuse(of: .connect, in: noFamily)?.message.hasPrefix("Both IPv4 and IPv6") == true)
        #expect(UDPStateMachine.misuse(of: .bind, in: noFamily)?.message.hasPrefix("Both IPv4 and IPv6") == true)
        // Sockets that exist already are not remade: a disabled family no longer matters to connect.
        let madeBefore = UDPStateMachine.FaceView(phase: .bound, hasEnabledFamily: false)
        #expect(UDPStateMachine.misuse(of: .connect, in: madeBefore) == nil)
    }
}
