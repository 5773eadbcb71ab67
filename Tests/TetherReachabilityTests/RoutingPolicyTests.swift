import Testing

@testable import TetherReachability

/// The route the kernel would use, as `ip route get` finds it: blocking routes of every type, then policy rules.
struct RoutingPolicyTests {
    typealias Link = RoutingState.Link
    typealias Route = RoutingState.Route
    typealias Rule = RoutingState.Rule

    static let loopback = RoutingStateTests.loopback
    static let eth0 = RoutingStateTests.eth0
    static let wlan0 = RoutingStateTests.wlan0
    static let wg0 = Link(
        index: 4,
        name: "wg0",
        flags: RoutingStateTests.running | Link.flagPointToPoint,
        hardwareType: 0xFFFE,
        driver: "wireguard"
    )

    static func address(_ text: String) -> IPAddressBytes { IPAddressBytes(text)! }

    static func route(
        _ destination: String? = nil,
        prefix: UInt8 = 0,
        via link: Link,
        kind: Route.Kind = .unicast,
        table: UInt32 = Route.tableMain,
        priority: UInt32 = 0,
        family: IPAddressBytes.Family = .ipv4
    ) -> Route {
        RoutingStateTests.route(
            destination,
            prefix: prefix,
            via: link,
            kind: kind,
            table: table,
            priority: priority,
            family: family
        )
    }

    static func rule(
        _ priority: UInt32,
        _ action: Rule.Action = .toTable,
        table: UInt32 = 0,
        family: IPAddressBytes.Family = .ipv4,
        configure: (inout Rule) -> Void = { _ in }
    ) -> Rule {
        var rule = Rule(family: family, priority: priority, action: action, table: table)
        configure(&rule)
        return rule
    }

    /// The kernel's default rules of both families (IPv6 has no `default` table rule).
    static let defaultRules =
        Rule.defaults(for: .ipv4) + Rule.defaults(for: .ipv6).filter { $0.table != Route.tableDefault }

    func evaluate(_ state: RoutingState, _ destination: RoutingState.Destination, userID: UInt32 = 0) -> NetworkPath {
        // By hardware type, as on a system whose sysfs says nothing more.
        state.evaluate(destination, userID: userID) { link in
            InterfaceClassifier.classify(hardwareType: link.hardwareType, isLoopback: link.isLoopback, hints: nil)
        }
    }

    // MARK: Blocking default routes

    /// `default via …` at metric 100 and `<kind> default metric 1`: `ip route get` fails ("No route to host",
    /// "Permission denied", "Invalid argument"), so the zero-address manager and any address are not reachable;
    /// only unicast defaults used to count, and the blocking route was ignored.
    @Test(arguments: [Route.Kind.unreachable, .blackhole, .prohibit], [IPAddressBytes.Family.ipv4, .ipv6])
    func aBlockingDefaultRouteWithALowerMetricMakesEverythingUnreachable(
        kind: Route.Kind,
        family: IPAddressBytes.Family
    ) {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0],
            rules: Self.defaultRules,
            routes: [
                Self.route(via: Self.eth0, priority: 100, family: family),
                Self.route(via: Self.loopback, kind: kind, priority: 1, family: family),
            ]
        )
        #expect(evaluate(state, .defaultRoute).status == .notReachable)
        let target = family == .ipv4 ? Self.address("8.8.8.8") : Self.address("2001:4860:4860::8888")
        #expect(evaluate(state, .addresses([target])).status == .notReachable)
        #expect(state.lookup(.init(destination: target, family: family, userID: 0)) == .blocked(kind))
    }

    @Test(arguments: [Route.Kind.unreachable, .blackhole, .prohibit])
    func aBlockingDefaultRouteWithAHigherMetricIsABackstopOnly(kind: Route.Kind) {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0],
            routes: [
                Self.route(via: Self.eth0, priority: 100),
                Self.route(via: Self.loopback, kind: kind, priority: 4_278_198_272),
            ]
        )
        #expect(evaluate(state, .defaultRoute).interfaceName == "eth0")
        #expect(evaluate(state, .addresses([Self.address("8.8.8.8")])).interfaceName == "eth0")
    }

    @Test func aBlockedFamilyLeavesTheOtherFamilysDefaultRoute() {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0],
            routes: [
                Self.route(via: Self.eth0, priority: 100),
                Self.route(via: Self.loopback, kind: .unreachable, priority: 1),
                Self.route(via: Self.eth0, priority: 1024, family: .ipv6),
            ]
        )
        let path = evaluate(state, .defaultRoute)
        #expect(path.status == .reachableViaEthernet)
        #expect(!path.supportsIPv4 && path.supportsIPv6)
    }

    // MARK: Policy rules

    /// `ip rule add to 192.0.2.1 lookup 100` with `default dev wlan0 table 100`: that one host leaves through
    /// wlan0, every other destination through the main table's eth0.
    @Test func aRuleSendsOneHostThroughAnotherTable() {
        let hostRule = Self.rule(1000, table: 100) { rule in
            rule.destination = Self.address("192.0.2.1")
            rule.destinationLength = 32
        }
        let state = RoutingState(
            links: [Self.loopback, Self.eth0, Self.wlan0],
            rules: Self.defaultRules + [hostRule],
            routes: [Self.route(via: Self.eth0, priority: 100), Self.route(via: Self.wlan0, table: 100)]
        )
        let host = evaluate(state, .addresses([Self.address("192.0.2.1")]))
        #expect(host.interfaceName == "wlan0")
        #expect(host.route == NetworkPath.Route(destination: "default", table: 100, metric: 0, rulePriority: 1000))
        #expect(evaluate(state, .addresses([Self.address("192.0.2.2")])).interfaceName == "eth0")
        // The zero-address manager asks about any destination: a rule for one host does not apply.
        #expect(evaluate(state, .defaultRoute).interfaceName == "eth0")
    }

    /// wg-quick's rules: `lookup main suppress_prefixlength 0` (the main table's default route is ignored, its
    /// more specific routes are not), then `not fwmark 51820 lookup 51820` (every unmarked packet to the tunnel).
    @Test func wgQuicksRulesSendEverythingButTheLocalNetworkThroughTheTunnel() {
        let suppress = Self.rule(32764, table: Route.tableMain) { $0.suppressPrefixLength = 0 }
        let unmarked = Self.rule(32765, table: 51820) { rule in
            rule.firewallMark = 51820
            rule.firewallMask = .max
            rule.flags = Rule.flagInvert
        }
        let state = RoutingState(
            links: [Self.loopback, Self.eth0, Self.wg0],
            rules: Self.defaultRules + [suppress, unmarked],
            routes: [
                Self.route(via: Self.eth0, priority: 100),
                Self.route("10.0.0.0", prefix: 24, via: Self.eth0),
                Self.route(via: Self.wg0, table: 51820),
            ]
        )
        let internet = evaluate(state, .defaultRoute)
        #expect(internet.interfaceName == "wg0")
        #expect(internet.interfaceKind == .vpn && internet.isVPN)
        #expect(internet.interfaceDriver == "wireguard")
        #expect(internet.status == .reachableViaWiFi)  // AFNetworking's catch-all, unchanged
        #expect(evaluate(state, .addresses([Self.address("10.0.0.7")])).interfaceName == "eth0")
        #expect(evaluate(state, .addresses([Self.address("8.8.8.8")])).interfaceName == "wg0")
    }

    @Test(arguments: [Rule.Action.unreachable, .blackhole, .prohibit])
    func aBlockingRuleEndsTheLookup(action: Rule.Action) {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0],
            rules: Self.defaultRules + [Self.rule(100, action)],
            routes: [Self.route(via: Self.eth0)]
        )
        #expect(evaluate(state, .defaultRoute).status == .notReachable)
        #expect(evaluate(state, .addresses([Self.address("8.8.8.8")])).status == .notReachable)
    }

    @Test func gotoSkipsTheRulesBetweenAndNopGoesOn() {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0, Self.wlan0],
            rules: Self.defaultRules + [
                Self.rule(100, .nop),
                Self.rule(200, .goto) { $0.gotoTarget = 400 },
                Self.rule(300, .unreachable),
                Self.rule(400, table: 100),
            ],
            routes: [Self.route(via: Self.eth0), Self.route(via: Self.wlan0, table: 100)]
        )
        #expect(evaluate(state, .defaultRoute).interfaceName == "wlan0")
    }

    @Test func aThrowRouteGoesOnToTheNextRule() {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0, Self.wlan0],
            rules: Self.defaultRules + [Self.rule(100, table: 100)],
            routes: [
                Self.route("192.0.2.0", prefix: 24, via: Self.wlan0, kind: .throw, table: 100),
                Self.route(via: Self.wlan0, table: 100),
                Self.route(via: Self.eth0),
            ]
        )
        #expect(evaluate(state, .addresses([Self.address("192.0.2.1")])).interfaceName == "eth0")
        #expect(evaluate(state, .addresses([Self.address("198.51.100.1")])).interfaceName == "wlan0")
    }

    /// The selectors a host lookup can evaluate: it comes from loopback (`iif lo`), names no output interface
    /// (`oif`), has no source address (IPv4 compares 0.0.0.0, IPv6 never matches a `from`), no mark, no ports, no
    /// protocol, no TOS, and the process's user.
    @Test(arguments: [
        ("iif lo", true), ("iif eth0", false), ("oif eth0", false), ("from 0.0.0.0/1", true),
        ("from 10.0.0.0/8", false), ("fwmark 0x1", false), ("not fwmark 0x1", true), ("fwmark 0x0/0x1", true),
        ("uidrange 1000-1000", true), ("uidrange 0-999", false), ("ipproto tcp", false), ("dport 443", false),
        ("tos 0x10", false), ("to 192.0.2.0/24", true), ("to 198.51.100.0/24", false), ("not to 192.0.2.0/24", false),
    ])
    func aRulesSelectorsMatchAHostLookupAsTheKernelDoes(selector: String, matches: Bool) throws {
        var rule = Self.rule(100, table: 100)
        let words = selector.split(separator: " ").map(String.init)
        let inverted = words[0] == "not"
        let (key, value) = inverted ? (words[1], words[2]) : (words[0], words[1])
        if inverted { rule.flags = Rule.flagInvert }
        switch key {
        case "iif": rule.inputInterface = value
        case "oif": rule.outputInterface = value
        case "from", "to":
            let parts = value.split(separator: "/")
            let prefix = try #require(UInt8(parts[1]))
            if key == "from" {
                (rule.source, rule.sourceLength) = (Self.address(String(parts[0])), prefix)
            } else {
                (rule.destination, rule.destinationLength) = (Self.address(String(parts[0])), prefix)
            }
        case "fwmark":
            let parts = value.split(separator: "/").map { UInt32($0.dropFirst(2), radix: 16)! }
            (rule.firewallMark, rule.firewallMask) = (parts[0], parts.count > 1 ? parts[1] : .max)
        case "uidrange":
            let bounds = value.split(separator: "-").map { UInt32($0)! }
            rule.userIDs = bounds[0]...bounds[1]
        case "ipproto": rule.ipProtocol = 6
        case "dport": rule.destinationPorts = 443...443
        case "tos": rule.typeOfService = 0x10
        default: Issue.record("unknown selector \(key)")
        }
        let state = RoutingState(
            links: [Self.loopback, Self.eth0, Self.wlan0],
            rules: Self.defaultRules + [rule],
            routes: [Self.route(via: Self.eth0), Self.route(via: Self.wlan0, table: 100)]
        )
        let path = evaluate(state, .addresses([Self.address("192.0.2.1")]), userID: 1000)
        #expect(path.interfaceName == (matches ? "wlan0" : "eth0"))
    }

    @Test func anIPv6RuleWithASourceNeverMatchesAHostLookup() {
        let rule = Self.rule(100, table: 100, family: .ipv6) { rule in
            rule.source = Self.address("::")
            rule.sourceLength = 1
        }
        let state = RoutingState(
            links: [Self.loopback, Self.eth0, Self.wlan0],
            rules: Self.defaultRules + [rule],
            routes: [
                Self.route(via: Self.eth0, family: .ipv6), Self.route(via: Self.wlan0, table: 100, family: .ipv6),
            ]
        )
        #expect(evaluate(state, .addresses([Self.address("2001:db8::1")])).interfaceName == "eth0")
    }

    @Test func aFamilyWithoutKnownRulesUsesTheKernelsDefaultRules() {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0],
            rules: [Self.rule(100, .unreachable)],
            routes: [Self.route(via: Self.eth0), Self.route(via: Self.eth0, family: .ipv6)]
        )
        let path = evaluate(state, .defaultRoute)
        #expect(path.interfaceName == "eth0")
        #expect(!path.supportsIPv4 && path.supportsIPv6)
    }

    @Test func theServingRouteNamesItsGatewayTableMetricAndRule() {
        var route = Self.route("10.1.0.0", prefix: 16, via: Self.eth0, priority: 50)
        route.nextHops[0].gateway = Self.address("10.0.0.1")
        let state = RoutingState(links: [Self.loopback, Self.eth0], routes: [route])
        let path = evaluate(state, .addresses([Self.address("10.1.2.3")]))
        #expect(path.route?.description == "10.1.0.0/16 via 10.0.0.1 table 254 metric 50 rule 32766")
    }
}
