import Foundation
import Testing

@testable import TetherSockets

/// The UDP machine as a table: every state × every event, the illegal pairs included, with the actions it returns
/// and the state it ends in. No sockets, no sleeps. States are reached by driving the machine (``UDPStart``); the
/// events are the samples of ``UDPStimulus``; "—" is no action.
struct UDPStateMachineTableTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var start: UDPStart
        var stimulus: UDPStimulus
        var actions: String
        var next: String

        init(_ start: UDPStart, _ stimulus: UDPStimulus, _ actions: String, _ next: String) {
            self.start = start
            self.stimulus = stimulus
            self.actions = actions
            self.next = next
        }

        var testDescription: String { "\(start) × \(stimulus) → \(actions) → \(next)" }
    }

    // swift-format-ignore
    static let table: [Row] = [
        // state, event, actions, next state
        // unbound: made and bound; not handed to NIO yet (the bind is asked for first)
        Row(.unbound, .bindAsked, "register", "binding(1)"),
        Row(.unbound, .channelActive, "close(v4)", "unbound"),
        Row(.unbound, .channelFailed, "close(v4)", "unbound"),
        Row(.unbound, .channelClosed, "—", "unbound"),
        Row(.unbound, .familyCloseAsked, "close(v6), publish", "unbound"),
        Row(.unbound, .sendAsked, "—", "unbound +1 queued"),
        Row(.unbound, .connectAsked, "—", "unbound +1 queued"),
        Row(.unbound, .resolved, "—", "unbound"),
        Row(.unbound, .connectCompleted, "—", "unbound"),
        Row(.unbound, .sendFilterAnswered, "—", "unbound"),
        Row(.unbound, .writeStarted, "—", "unbound"),
        Row(.unbound, .writeCompleted, "—", "unbound"),
        Row(.unbound, .timerFired, "—", "unbound"),
        Row(.unbound, .receiveAsked, "—", "unbound"),
        Row(.unbound, .datagramReceived, "—", "unbound"),
        Row(.unbound, .receiveFilterAnswered, "—", "unbound"),
        Row(.unbound, .closeAfterSendingAsked, "—", "unbound+closing"),
        Row(.unbound, .closeAsked, "shutDown", "closed"),

        // binding: one channel registering: packets wait, receiving is remembered
        Row(.binding, .bindAsked, "—", "binding(1)"),
        Row(.binding, .channelActive, "publish", "idle"),
        Row(.binding, .channelFailed, "close(v4), end(other)", "closed"),
        Row(.binding, .channelClosed, "—", "binding(1)"),
        Row(.binding, .familyCloseAsked, "close(v6), publish", "binding(1)"),
        Row(.binding, .sendAsked, "—", "binding(1) +1 queued"),
        Row(.binding, .connectAsked, "—", "binding(1) +1 queued"),
        Row(.binding, .resolved, "—", "binding(1)"),
        Row(.binding, .connectCompleted, "—", "binding(1)"),
        Row(.binding, .sendFilterAnswered, "—", "binding(1)"),
        Row(.binding, .writeStarted, "—", "binding(1)"),
        Row(.binding, .writeCompleted, "—", "binding(1)"),
        Row(.binding, .timerFired, "—", "binding(1)"),
        Row(.binding, .receiveAsked, "—", "binding(1)"),
        Row(.binding, .datagramReceived, "—", "binding(1)"),
        Row(.binding, .receiveFilterAnswered, "—", "binding(1)"),
        Row(.binding, .closeAfterSendingAsked, "publish", "binding(1)+closing"),
        Row(.binding, .closeAsked, "shutDown", "closed"),

        // idle: ready, nothing in flight
        Row(.idle, .bindAsked, "—", "idle"),
        Row(.idle, .channelActive, "close(v4)", "idle"),
        Row(.idle, .channelFailed, "close(v4)", "idle"),
        Row(.idle, .channelClosed, "close(v4), publish, end", "closed"),
        Row(.idle, .familyCloseAsked, "close(v6), publish", "idle"),
        Row(.idle, .sendAsked, "write(1, two)", "writing"),
        Row(.idle, .connectAsked, "connect(9)", "connecting"),
        Row(.idle, .resolved, "—", "idle"),
        Row(.idle, .connectCompleted, "—", "idle"),
        Row(.idle, .sendFilterAnswered, "—", "idle"),
        Row(.idle, .writeStarted, "—", "idle"),
        Row(.idle, .writeCompleted, "—", "idle"),
        Row(.idle, .timerFired, "—", "idle"),
        Row(.idle, .receiveAsked, "reads(on)", "idle"),
        Row(.idle, .datagramReceived, "—", "idle"),
        Row(.idle, .receiveFilterAnswered, "—", "idle"),
        Row(.idle, .closeAfterSendingAsked, "publish, end", "closed"),
        Row(.idle, .closeAsked, "shutDown", "closed"),

        // resolving: packet 1 (to "localhost") waits for its lookup
        Row(.resolving, .bindAsked, "—", "resolving"),
        Row(.resolving, .channelActive, "close(v4)", "resolving"),
        Row(.resolving, .channelFailed, "close(v4)", "resolving"),
        Row(.resolving, .channelClosed, "close(v4), publish, end", "closed"),
        Row(.resolving, .familyCloseAsked, "close(v6), publish", "resolving"),
        Row(.resolving, .sendAsked, "—", "resolving +1 queued"),
        Row(.resolving, .connectAsked, "—", "resolving +1 queued"),
        Row(.resolving, .resolved, "write(1, one)", "writing"),
        Row(.resolving, .connectCompleted, "—", "resolving"),
        Row(.resolving, .sendFilterAnswered, "—", "resolving"),
        Row(.resolving, .writeStarted, "—", "resolving"),
        Row(.resolving, .writeCompleted, "—", "resolving"),
        Row(.resolving, .timerFired, "—", "resolving"),
        Row(.resolving, .receiveAsked, "reads(on)", "resolving"),
        Row(.resolving, .datagramReceived, "—", "resolving"),
        Row(.resolving, .receiveFilterAnswered, "—", "resolving"),
        Row(.resolving, .closeAfterSendingAsked, "publish", "resolving+closing"),
        Row(.resolving, .closeAsked, "shutDown", "closed"),

        // connecting: packet 1, a connect, waits for the channel
        Row(.connecting, .bindAsked, "—", "connecting"),
        Row(.connecting, .channelActive, "close(v4)", "connecting"),
        Row(.connecting, .channelFailed, "close(v4)", "connecting"),
        Row(.connecting, .channelClosed, "close(v4), publish, end", "closed"),
        Row(.connecting, .familyCloseAsked, "close(v6), publish", "connecting"),
        Row(.connecting, .sendAsked, "—", "connecting +1 queued"),
        Row(.connecting, .connectAsked, "—", "connecting +1 queued"),
        Row(.connecting, .resolved, "—", "connecting"),
        Row(.connecting, .connectCompleted, "publish, connected(9)", "idle"),
        Row(.connecting, .sendFilterAnswered, "—", "connecting"),
        Row(.connecting, .writeStarted, "—", "connecting"),
        Row(.connecting, .writeCompleted, "—", "connecting"),
        Row(.connecting, .timerFired, "—", "connecting"),
        Row(.connecting, .receiveAsked, "reads(on)", "connecting"),
        Row(.connecting, .datagramReceived, "—", "connecting"),
        Row(.connecting, .receiveFilterAnswered, "—", "connecting"),
        Row(.connecting, .closeAfterSendingAsked, "publish", "connecting+closing"),
        Row(.connecting, .closeAsked, "shutDown", "closed"),

        // filtering: packet 1 waits for the send filter
        Row(.filtering, .bindAsked, "—", "filtering"),
        Row(.filtering, .channelActive, "close(v4)", "filtering"),
        Row(.filtering, .channelFailed, "close(v4)", "filtering"),
        Row(.filtering, .channelClosed, "close(v4), publish, end", "closed"),
        Row(.filtering, .familyCloseAsked, "close(v6), publish", "filtering"),
        Row(.filtering, .sendAsked, "—", "filtering +1 queued"),
        Row(.filtering, .connectAsked, "—", "filtering +1 queued"),
        Row(.filtering, .resolved, "—", "filtering"),
        Row(.filtering, .connectCompleted, "—", "filtering"),
        Row(.filtering, .sendFilterAnswered, "write(1, one)", "writing"),
        Row(.filtering, .writeStarted, "—", "filtering"),
        Row(.filtering, .writeCompleted, "—", "filtering"),
        Row(.filtering, .timerFired, "—", "filtering"),
        Row(.filtering, .receiveAsked, "reads(on)", "filtering"),
        Row(.filtering, .datagramReceived, "—", "filtering"),
        Row(.filtering, .receiveFilterAnswered, "—", "filtering"),
        Row(.filtering, .closeAfterSendingAsked, "publish", "filtering+closing"),
        Row(.filtering, .closeAsked, "shutDown", "closed"),

        // writing: write 1 ("one", timeout 5 s) is with the engine
        Row(.writing, .bindAsked, "—", "writing"),
        Row(.writing, .channelActive, "close(v4)", "writing"),
        Row(.writing, .channelFailed, "close(v4)", "writing"),
        Row(.writing, .channelClosed, "close(v4), publish, end", "closed"),
        Row(.writing, .familyCloseAsked, "close(v6), publish", "writing"),
        Row(.writing, .sendAsked, "—", "writing +1 queued"),
        Row(.writing, .connectAsked, "—", "writing +1 queued"),
        Row(.writing, .resolved, "—", "writing"),
        Row(.writing, .connectCompleted, "—", "writing"),
        Row(.writing, .sendFilterAnswered, "—", "writing"),
        Row(.writing, .writeStarted, "arm(1, 5.0s)", "writing"),
        Row(.writing, .writeCompleted, "sent(1)", "idle"),
        Row(.writing, .timerFired, "notSent(1, sendTimeout)", "idle"),
        Row(.writing, .receiveAsked, "reads(on)", "writing"),
        Row(.writing, .datagramReceived, "—", "writing"),
        Row(.writing, .receiveFilterAnswered, "—", "writing"),
        Row(.writing, .closeAfterSendingAsked, "publish", "draining"),
        Row(.writing, .closeAsked, "shutDown", "closed"),

        // draining: write 1 is with the engine, and close after sending was asked
        Row(.draining, .bindAsked, "—", "draining"),
        Row(.draining, .channelActive, "close(v4)", "draining"),
        Row(.draining, .channelFailed, "close(v4)", "draining"),
        Row(.draining, .channelClosed, "close(v4), publish, end", "closed"),
        Row(.draining, .familyCloseAsked, "close(v6), publish", "draining"),
        Row(.draining, .sendAsked, "—", "draining +1 queued"),
        Row(.draining, .connectAsked, "—", "draining +1 queued"),
        Row(.draining, .resolved, "—", "draining"),
        Row(.draining, .connectCompleted, "—", "draining"),
        Row(.draining, .sendFilterAnswered, "—", "draining"),
        Row(.draining, .writeStarted, "arm(1, 5.0s)", "draining"),
        Row(.draining, .writeCompleted, "sent(1), publish, end", "closed"),
        Row(.draining, .timerFired, "notSent(1, sendTimeout), publish, end", "closed"),
        Row(.draining, .receiveAsked, "reads(on)", "draining"),
        Row(.draining, .datagramReceived, "—", "draining"),
        Row(.draining, .receiveFilterAnswered, "—", "draining"),
        Row(.draining, .closeAfterSendingAsked, "publish", "draining"),
        Row(.draining, .closeAsked, "shutDown", "closed"),

        // closed: ended: late answers are ignored, channels that turn up are closed
        Row(.closed, .bindAsked, "—", "closed"),
        Row(.closed, .channelActive, "close(v4)", "closed"),
        Row(.closed, .channelFailed, "close(v4)", "closed"),
        Row(.closed, .channelClosed, "—", "closed"),
        Row(.closed, .familyCloseAsked, "close(v6)", "closed"),
        Row(.closed, .sendAsked, "sendAfterLife(2)", "closed"),
        Row(.closed, .connectAsked, "connectAfterLife", "closed"),
        Row(.closed, .resolved, "—", "closed"),
        Row(.closed, .connectCompleted, "—", "closed"),
        Row(.closed, .sendFilterAnswered, "—", "closed"),
        Row(.closed, .writeStarted, "—", "closed"),
        Row(.closed, .writeCompleted, "—", "closed"),
        Row(.closed, .timerFired, "—", "closed"),
        Row(.closed, .receiveAsked, "—", "closed"),
        Row(.closed, .datagramReceived, "—", "closed"),
        Row(.closed, .receiveFilterAnswered, "—", "closed"),
        Row(.closed, .closeAfterSendingAsked, "—", "closed"),
        Row(.closed, .closeAsked, "shutDown", "closed"),
    ]

    @Test("the table has one row for every state × event pair")
    func everyPairOnce() {
        let pairs = Set(Self.table.map { "\($0.start) × \($0.stimulus)" })
        #expect(pairs.count == Self.table.count)
        #expect(Self.table.count == UDPStart.allCases.count * UDPStimulus.allCases.count)
    }

    @Test("state × event → actions → next state", arguments: table)
    func row(_ row: Row) {
        var machine = row.start.machine
        let actions = machine.handle(row.stimulus.event)
        #expect(actions.text == row.actions)
        #expect(machine.tableState == row.next)
    }
}
