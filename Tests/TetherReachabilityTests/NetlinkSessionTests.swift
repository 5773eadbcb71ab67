#if os(Linux)
import CTetherNetlink
import Testing

@testable import TetherReachability

struct NetlinkSessionTests {
    static let port: UInt32 = 4242

    func requestedDumps(_ actions: [NetlinkSession.Action]) -> [(type: UInt16, sequence: UInt32)] {
        actions.map { action in
            switch action {
            case .send(let message): (message.type, message.sequence)
            }
        }
    }

    func done(_ sequence: UInt32, port: UInt32 = port) -> NetlinkMessage {
        NetlinkMessage(type: UInt16(NLMSG_DONE), flags: 2, sequence: sequence, portID: port, payload: [0, 0, 0, 0])
    }

    /// A recorded message made to look like a reply to our dump `sequence`.
    func reply(_ datagram: [UInt8], _ sequence: UInt32, flags: UInt16 = 2) -> NetlinkMessage {
        var message = NetlinkMessage.parse(datagram)[0]
        message.sequence = sequence
        message.portID = Self.port
        message.flags = flags
        return message
    }

    @Test func aFullDumpAsksForLinksThenAddressesThenRoutesThenRulesOneAtATime() {
        var session = NetlinkSession(portID: Self.port)
        #expect(session.isSynchronised)
        let first = requestedDumps(session.requestFullDump())
        #expect(first.map(\.type) == [UInt16(RTM_GETLINK)])
        #expect(!session.isSynchronised)
        let second = requestedDumps(session.receive(done(first[0].sequence)).actions)
        #expect(second.map(\.type) == [UInt16(RTM_GETADDR)])
        let third = requestedDumps(session.receive(done(second[0].sequence)).actions)
        #expect(third.map(\.type) == [UInt16(RTM_GETROUTE)])
        let fourth = requestedDumps(session.receive(done(third[0].sequence)).actions)
        #expect(fourth.map(\.type) == [UInt16(RTM_GETRULE)])
        #expect(session.receive(done(fourth[0].sequence)).actions.isEmpty)
        #expect(session.isSynchronised)
    }

    @Test func dumpRequestsAreWellFormed() {
        let request = NetlinkSession.request(.routes, sequence: 5, portID: Self.port)
        #expect(request.flags == UInt16(NLM_F_REQUEST | NLM_F_DUMP))
        #expect(request.payload.count == MemoryLayout<rtmsg>.size)
        #expect(NetlinkMessage.parse(request.encoded()) == [request])
    }

    @Test func anEventCarryingAnotherProcesssSequenceDoesNotEndTheDump() {
        var session = NetlinkSession(portID: Self.port)
        let sequence = requestedDumps(session.requestFullDump())[0].sequence
        // `ip` numbers its requests too; its events carry its own port.
        #expect(session.receive(done(sequence, port: 777)).actions.isEmpty)
        #expect(!session.isSynchronised)
    }

    @Test func anOverrunDuringADumpQueuesAFullDumpAfterIt() {
        var session = NetlinkSession(portID: Self.port)
        var sequence = requestedDumps(session.requestFullDump())[0].sequence
        #expect(session.requestFullDump().isEmpty)  // a dump is in flight: the others queue behind it
        var order: [UInt16] = []
        while !session.isSynchronised {
            let next = requestedDumps(session.receive(done(sequence)).actions)
            order += next.map(\.type)
            if let request = next.first { sequence = request.sequence }
        }
        // The link dump in flight may hold entries older than the lost events: it runs again, last.
        #expect(order == [UInt16(RTM_GETADDR), UInt16(RTM_GETROUTE), UInt16(RTM_GETRULE), UInt16(RTM_GETLINK)])
        // After the dumps, an overrun starts over from the links.
        #expect(requestedDumps(session.requestFullDump()).map(\.type) == [UInt16(RTM_GETLINK)])
    }

    @Test func aRouteDumpReplacesTheRoutesItKnew() {
        var session = NetlinkSession(portID: Self.port)
        for message in NetlinkMessage.parse(RecordedNetlink.newLinkTrv0Running + RecordedNetlink.newDefaultRoute) {
            _ = session.receive(message)
        }
        #expect(session.state.routes.count == 1)
        var sequence = requestedDumps(session.requestFullDump())[0].sequence
        // The link dump brings the link back; the route dump finds no route any more.
        #expect(session.receive(reply(RecordedNetlink.newLinkTrv0Running, sequence)).changed)
        sequence = requestedDumps(session.receive(done(sequence)).actions)[0].sequence
        sequence = requestedDumps(session.receive(done(sequence)).actions)[0].sequence
        #expect(session.state.routes.isEmpty)
        sequence = requestedDumps(session.receive(done(sequence)).actions)[0].sequence
        _ = session.receive(done(sequence))
        #expect(session.isSynchronised)
        #expect(session.state.links.count == 1)
    }

    @Test func aLinkGoingDownAsksForTheRoutesAgain() {
        var session = NetlinkSession(portID: Self.port)
        for message in NetlinkMessage.parse(RecordedNetlink.newLinkTrv0Running) { _ = session.receive(message) }
        let outcome = session.receive(NetlinkMessage.parse(RecordedNetlink.newLinkTrv0Down)[0])
        #expect(outcome.changed)
        #expect(requestedDumps(outcome.actions).map(\.type) == [UInt16(RTM_GETROUTE)])
    }

    @Test func anInterruptedDumpIsRunAgain() {
        var session = NetlinkSession(portID: Self.port)
        let sequence = requestedDumps(session.requestFullDump())[0].sequence
        _ = session.receive(reply(RecordedNetlink.newLinkTrv0Running, sequence, flags: UInt16(2 | NLM_F_DUMP_INTR)))
        let next = requestedDumps(session.receive(done(sequence)).actions)
        #expect(next.map(\.type) == [UInt16(RTM_GETADDR)])
        let afterAddresses = requestedDumps(session.receive(done(next[0].sequence)).actions)
        let afterRoutes = requestedDumps(session.receive(done(afterAddresses[0].sequence)).actions)
        let afterRules = requestedDumps(session.receive(done(afterRoutes[0].sequence)).actions)
        #expect(afterRules.map(\.type) == [UInt16(RTM_GETLINK)])
    }

    @Test func aDumpInterruptedAgainAndAgainIsFinallyTakenAsItIs() {
        var session = NetlinkSession(portID: Self.port)
        var request = requestedDumps(session.requestFullDump())[0]
        var linkDumps = 1
        while true {
            if request.type == UInt16(RTM_GETLINK) {
                let interrupted = UInt16(2 | NLM_F_DUMP_INTR)
                _ = session.receive(reply(RecordedNetlink.newLinkTrv0Running, request.sequence, flags: interrupted))
            }
            guard let next = requestedDumps(session.receive(done(request.sequence)).actions).first else { break }
            request = next
            if next.type == UInt16(RTM_GETLINK) { linkDumps += 1 }
        }
        #expect(session.isSynchronised)
        #expect(linkDumps == 1 + NetlinkSession.maximumRepeatedInterruptedDumps)
    }

    @Test func aRefusedDumpReportsTheErrnoAndMovesOn() {
        var session = NetlinkSession(portID: Self.port)
        let sequence = requestedDumps(session.requestFullDump())[0].sequence
        var errorPayload = withUnsafeBytes(of: Int32(-13)) { Array($0) }
        errorPayload += [UInt8](repeating: 0, count: 16)
        let refusal = NetlinkMessage(
            type: UInt16(NLMSG_ERROR),
            flags: 0,
            sequence: sequence,
            portID: Self.port,
            payload: errorPayload
        )
        let outcome = session.receive(refusal)
        #expect(outcome.error.map { NetworkReachabilityError.Code.backendFailed ~= $0 } == true)
        #expect(requestedDumps(outcome.actions).map(\.type) == [UInt16(RTM_GETADDR)])
    }

    /// Found by FuzzNetlink: an error reply whose code is Int32.min trapped negating it.
    @Test(arguments: [Int32.min, Int32.max, 1])
    func anErrorReplyWithAnyCodeIsAnErrorNotATrap(code: Int32) {
        var session = NetlinkSession(portID: Self.port)
        let sequence = requestedDumps(session.requestFullDump())[0].sequence
        let refusal = NetlinkMessage(
            type: UInt16(NLMSG_ERROR),
            flags: 0,
            sequence: sequence,
            portID: Self.port,
            payload: withUnsafeBytes(of: code) { Array($0) } + [UInt8](repeating: 0, count: 16)
        )
        let outcome = session.receive(refusal)
        #expect(outcome.error.map { NetworkReachabilityError.Code.backendFailed ~= $0 } == true)
        #expect(requestedDumps(outcome.actions).map(\.type) == [UInt16(RTM_GETADDR)])
    }
}
#endif
