#if os(Linux)
import Testing

@testable import TetherReachability

struct RoutingChangeTests {
    func decodeOne(_ datagram: [UInt8]) throws -> RoutingChange {
        let messages = NetlinkMessage.parse(datagram)
        try #require(messages.count == 1)
        return try #require(RoutingChange(messages[0]))
    }

    @Test func aRecordedNewLinkDecodesNameIndexFlagsTypeAndDriver() throws {
        #expect(
            try decodeOne(RecordedNetlink.newLinkTrv0Running)
                == .link(
                    RoutingState.Link(index: 3, name: "trv0", flags: 0x11043, hardwareType: 1, driver: "veth", group: 0)
                )
        )
        guard case .link(let down) = try decodeOne(RecordedNetlink.newLinkTrv0Down) else {
            Issue.record("not a link")
            return
        }
        #expect(down.name == "trv0" && !down.isUsable)
    }

    @Test func aRecordedNewAddressDecodesTheLocalAddress() throws {
        #expect(
            try decodeOne(RecordedNetlink.newAddress)
                == .address(
                    RoutingState.Address(interfaceIndex: 3, address: IPAddressBytes("10.77.0.1")!, prefixLength: 24)
                )
        )
    }

    @Test func recordedDefaultRouteAdditionAndDeletionDecodeToTheSameRoute() throws {
        let expected = RoutingState.Route(
            family: .ipv4,
            table: RoutingState.Route.tableMain,
            kind: .unicast,
            destination: nil,
            prefixLength: 0,
            typeOfService: 0,
            priority: 5,
            nextHops: [RoutingState.NextHop(interfaceIndex: 3, gateway: IPAddressBytes("10.77.0.2"), flags: 0)]
        )
        #expect(try decodeOne(RecordedNetlink.newDefaultRoute) == .route(expected, replacing: false))
        #expect(try decodeOne(RecordedNetlink.deleteDefaultRoute) == .routeRemoved(expected))
    }

    @Test func recordedMessagesDripFedOrBatchedGiveTheSameState() throws {
        let datagrams = [
            RecordedNetlink.newLinkTrv0Down, RecordedNetlink.newLinkTrv0Running, RecordedNetlink.newAddress,
            RecordedNetlink.newDefaultRoute,
        ]
        var oneByOne = NetlinkSession(portID: 99)
        for datagram in datagrams {
            for message in NetlinkMessage.parse(datagram) { _ = oneByOne.receive(message) }
        }
        var batched = NetlinkSession(portID: 99)
        for message in NetlinkMessage.parse(datagrams.flatMap { $0 }) { _ = batched.receive(message) }
        #expect(oneByOne.state == batched.state)
        #expect(batched.state.evaluate(.defaultRoute) { _ in .wiredEthernet }.interfaceName == "trv0")
        var withDeletion = batched
        for message in NetlinkMessage.parse(RecordedNetlink.deleteDefaultRoute) { _ = withDeletion.receive(message) }
        #expect(withDeletion.state.evaluate(.defaultRoute) { _ in .wiredEthernet }.status == .notReachable)
    }

    /// RTM_NEWRULE messages the kernel dumped after `ip rule add to 192.0.2.1 lookup 100 priority 1000`,
    /// `ip rule add table main suppress_prefixlength 0 priority 1500` and
    /// `ip rule add not fwmark 51820 table 51820 priority 2000`.
    static let recordedRules = [
        "440000002000020001000000884c000002200000640000010000000008000f006400000008000e00ffffffff0500150000000000"
            + "08000600e803000008000100c0000201",
        "3c0000002000020001000000884c000002000000fe0000010000000008000f00fe00000008000e0000000000050015000000000008"
            + "000600dc050000",
        "4c0000002000020001000000884c000002000000fc0000010200000008000f006cca000008000e00ffffffff050015000000000008"
            + "000600d007000008000a006cca000008001000ffffffff",
    ]

    @Test func recordedRulesDecodeTheirSelectorsActionsAndPriorities() throws {
        let rules = try Self.recordedRules.map { hex -> RoutingState.Rule in
            guard case .rule(let rule) = try decodeOne(RecordedNetlink.bytes(hex)) else {
                throw NamespaceFreeFailure(description: "not a rule: \(hex)")
            }
            return rule
        }
        var host = RoutingState.Rule(family: .ipv4, priority: 1000, action: .toTable, table: 100)
        host.destination = IPAddressBytes("192.0.2.1")
        host.destinationLength = 32
        var suppress = RoutingState.Rule(family: .ipv4, priority: 1500, action: .toTable, table: 254)
        suppress.suppressPrefixLength = 0
        var unmarked = RoutingState.Rule(family: .ipv4, priority: 2000, action: .toTable, table: 51820)
        unmarked.flags = RoutingState.Rule.flagInvert
        unmarked.firewallMark = 51820
        unmarked.firewallMask = .max
        #expect(rules == [host, suppress, unmarked])
    }

    struct NamespaceFreeFailure: Error, CustomStringConvertible {
        var description: String
    }

    @Test func truncatedOrForeignMessagesAreIgnored() {
        let route = RecordedNetlink.newDefaultRoute
        #expect(NetlinkMessage.parse(Array(route.prefix(10))).isEmpty)
        #expect(NetlinkMessage.parse(Array(route.prefix(route.count - 8))).isEmpty)
        // A message type that is not rtnetlink's, and a route message too short for its header.
        #expect(RoutingChange(NetlinkMessage(type: 0x30, flags: 0, sequence: 0, portID: 0, payload: [1, 2])) == nil)
        #expect(RoutingChange(NetlinkMessage(type: 24, flags: 0, sequence: 0, portID: 0, payload: [2, 0])) == nil)
    }

    @Test func encodedMessagesParseBack() {
        let attributes = NetlinkAttributes([3: Array("eth7".utf8) + [0], 4: [1, 0, 0, 0]])
        let message = NetlinkMessage(type: 16, flags: 2, sequence: 7, portID: 9, payload: attributes.encoded())
        #expect(NetlinkMessage.parse(message.encoded() + message.encoded()) == [message, message])
        let parsed = NetlinkAttributes(parsing: attributes.encoded(), from: 0)
        #expect(parsed.string(3) == "eth7")
        #expect(parsed.uint32(4) == 1)
    }
}
#endif
