import Testing

@testable import TetherPostgres

/// Every state of a store call against every event: the first of the call's end, its deadlines and its connection's
/// close answers it, and nothing after changes the answer.
struct PostgresCallMachineTests {
    typealias Machine = PostgresCallMachine

    /// A machine in `state`, reached through the events that lead there.
    private static func machine(in state: Machine.State) -> Machine {
        var machine = Machine()
        switch state {
        case .waitingForConnection: break
        case .running: _ = machine.handle(.leased)
        case .answered: _ = machine.handle(.connectionDeadlinePassed)
        }
        #expect(machine.state == state)
        return machine
    }

    static let table: [(Machine.State, Machine.Event, Machine.Action, Machine.State)] = [
        (.waitingForConnection, .leased, .runBody, .running),
        (.waitingForConnection, .finished, .answer(.result), .answered),
        (.waitingForConnection, .connectionDeadlinePassed, .answer(.noConnection), .answered),
        (.waitingForConnection, .answerDeadlinePassed, .none, .waitingForConnection),
        (.waitingForConnection, .connectionClosed, .none, .waitingForConnection),
        (.waitingForConnection, .cancelled, .cancelWork, .waitingForConnection),
        (.running, .leased, .none, .running),
        (.running, .finished, .answer(.result), .answered),
        (.running, .connectionDeadlinePassed, .none, .running),
        (.running, .answerDeadlinePassed, .answerAndClose(.noAnswer), .answered),
        (.running, .connectionClosed, .answer(.connectionLost), .answered),
        (.running, .cancelled, .cancelWork, .running),
        (.answered, .leased, .refuseBody, .answered),
        (.answered, .finished, .none, .answered),
        (.answered, .connectionDeadlinePassed, .none, .answered),
        (.answered, .answerDeadlinePassed, .none, .answered),
        (.answered, .connectionClosed, .none, .answered),
        (.answered, .cancelled, .none, .answered),
    ]

    @Test(arguments: table)
    func eachEventInEachStateDoesWhatTheTableSays(
        _ row: (Machine.State, Machine.Event, Machine.Action, Machine.State)
    ) {
        var machine = Self.machine(in: row.0)
        #expect(machine.handle(row.1) == row.2)
        #expect(machine.state == row.3)
    }

    @Test func theTableCoversEveryStateAndEvent() {
        let states: [Machine.State] = [.waitingForConnection, .running, .answered]
        let events: [Machine.Event] = [
            .leased, .finished, .connectionDeadlinePassed, .answerDeadlinePassed, .connectionClosed, .cancelled,
        ]
        for state in states {
            for event in events {
                #expect(Self.table.contains { $0.0 == state && $0.1 == event }, "\(state) × \(event)")
            }
        }
        #expect(Self.table.count == states.count * events.count)
    }

    @Test func aResultAfterTheDeadlineDoesNotChangeTheAnswer() {
        var machine = Machine()
        #expect(machine.handle(.leased) == .runBody)
        #expect(machine.handle(.answerDeadlinePassed) == .answerAndClose(.noAnswer))
        #expect(machine.handle(.connectionClosed) == .none)
        #expect(machine.handle(.finished) == .none)
        #expect(machine.state == .answered)
    }
}
