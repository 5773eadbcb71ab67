import Testing

@testable import TetherReachability

struct RoutingStateTests {
    typealias Link = RoutingState.Link
    typealias Route = RoutingState.Route

    static let running = Link.flagUp | Link.flagRunning
    static let loopback = Link(index: 1, name: "lo", flags: running | Link.flagLoopback, hardwareType: 772)
    static let eth0 = Link(index: 2, name: "eth0", flags: running, hardwareType: 1)
    static let wlan0 = Link(index: 3, name: "wlan0", flags: running, hardwareType: 1)

    static func address(_ text: String) -> IPAddressBytes { IPAddressBytes(text)! }

    static func route(
        _ destination: String? = nil,
        prefix: UInt8 = 0,
        via link: Link,
        kind: Route.Kind = .unicast,
        table: UInt32 = Route.tableMain,
        priority: UInt32 = 0,
        hopFlags: UInt32 = 0,
        family: IPAddressBytes.Family = .ipv4
    ) -> Route {
        Route(
            family: destination.map { address($0).family } ?? family,
            table: table,
            kind: kind,
            destination: destination.map(address),
            prefixLength: prefix,
            typeOfService: 0,
            priority: priority,
            nextHops: [RoutingState.NextHop(interfaceIndex: link.index, gateway: nil, flags: hopFlags)]
        )
    }

    /// Classifies by name, as a test stand-in for sysfs.
    static func classify(_ link: Link) -> NetworkPath.InterfaceType {
        switch link.name {
        case "lo": .loopback
        case "wlan0": .wifi
        case "wwan0": .cellular
        default: .wiredEthernet
        }
    }

    func evaluate(_ state: RoutingState, _ destination: RoutingState.Destination) -> NetworkPath {
        state.evaluate(destination, classify: Self.classify)
    }

    @Test func noDefaultRouteIsNotReachable() {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0],
            routes: [Self.route("10.0.0.0", prefix: 24, via: Self.eth0)]
        )
        #expect(evaluate(state, .defaultRoute) == NetworkPath(status: .notReachable))
    }

    @Test func aDefaultRouteOverARunningLinkIsReachableThroughIt() {
        let state = RoutingState(links: [Self.loopback, Self.eth0], routes: [Self.route(via: Self.eth0)])
        #expect(
            evaluate(state, .defaultRoute)
                == NetworkPath(
                    status: .reachableViaEthernet,
                    interfaceName: "eth0",
                    interfaceType: .wiredEthernet,
                    supportsIPv4: true,
                    route: NetworkPath.Route(destination: "default", table: 254, metric: 0, rulePriority: 32766)
                )
        )
    }

    @Test(arguments: [RoutingState.Link.flagUp, RoutingState.Link.flagRunning, 0])
    func aDefaultRouteOverALinkThatIsDownOrWithoutCarrierDoesNotCount(linkFlags: UInt32) {
        var link = Self.eth0
        link.flags = linkFlags
        // The kernel keeps such a route (flagged linkdown when the carrier is lost) and would even use it.
        let state = RoutingState(
            links: [link],
            routes: [Self.route(via: link, hopFlags: RoutingState.NextHop.linkDownFlags)]
        )
        #expect(evaluate(state, .defaultRoute).status == .notReachable)
    }

    @Test func aStaleLinkdownFlagDoesNotOutliveTheCarrierComingBack() {
        // Carrier back: the link says RUNNING, while the route as last dumped still says linkdown.
        let state = RoutingState(
            links: [Self.eth0],
            routes: [Self.route(via: Self.eth0, hopFlags: RoutingState.NextHop.linkDownFlags)]
        )
        #expect(evaluate(state, .defaultRoute).interfaceName == "eth0")
    }

    @Test func theLowestMetricDefaultRouteChoosesTheInterface() {
        let state = RoutingState(
            links: [Self.eth0, Self.wlan0],
            routes: [Self.route(via: Self.eth0, priority: 600), Self.route(via: Self.wlan0, priority: 100)]
        )
        let path = evaluate(state, .defaultRoute)
        #expect(path.interfaceName == "wlan0")
        #expect(path.status == .reachableViaWiFi)
    }

    @Test func anIPv6OnlyDefaultRouteIsReachableAndSaysSo() {
        let state = RoutingState(links: [Self.eth0], routes: [Self.route(via: Self.eth0, family: .ipv6)])
        let path = evaluate(state, .defaultRoute)
        #expect(path.status == .reachableViaEthernet)
        #expect(!path.supportsIPv4 && path.supportsIPv6)
    }

    @Test func unreachableDefaultRoutesDoNotCount() {
        let state = RoutingState(links: [Self.eth0], routes: [Self.route(via: Self.eth0, kind: .unreachable)])
        #expect(evaluate(state, .defaultRoute).status == .notReachable)
    }

    @Test func anAddressOnAConnectedPrefixIsReachableAndAnUnroutableOneIsNot() {
        let state = RoutingState(
            links: [Self.loopback, Self.eth0],
            routes: [Self.route("10.0.0.0", prefix: 24, via: Self.eth0)]
        )
        #expect(evaluate(state, .addresses([Self.address("10.0.0.7")])).interfaceName == "eth0")
        #expect(evaluate(state, .addresses([Self.address("192.0.2.1")])).status == .notReachable)
        #expect(evaluate(state, .addresses([Self.address("2001:db8::1")])).status == .notReachable)
    }

    @Test func theLongestPrefixWinsAndALinkdownPrefixFallsBackToAShorterOne() {
        var down = Self.wlan0
        down.flags = Link.flagUp
        let routes = [Self.route(via: Self.eth0), Self.route("10.1.0.0", prefix: 16, via: Self.wlan0)]
        let state = RoutingState(links: [Self.eth0, Self.wlan0], routes: routes)
        #expect(evaluate(state, .addresses([Self.address("10.1.2.3")])).interfaceName == "wlan0")
        let fallback = RoutingState(links: [Self.eth0, down], routes: routes)
        #expect(evaluate(fallback, .addresses([Self.address("10.1.2.3")])).interfaceName == "eth0")
    }

    @Test(arguments: [Route.Kind.unreachable, .blackhole, .prohibit])
    func aBlockingRouteEndsTheSearch(kind: Route.Kind) {
        let state = RoutingState(
            links: [Self.eth0],
            routes: [Self.route(via: Self.eth0), Self.route("192.0.2.0", prefix: 24, via: Self.eth0, kind: kind)]
        )
        #expect(evaluate(state, .addresses([Self.address("192.0.2.1")])).status == .notReachable)
        #expect(evaluate(state, .addresses([Self.address("198.51.100.1")])).status == .reachableViaEthernet)
    }

    @Test func aLocalAddressIsReachableThroughLoopbackOnlyWhileLoopbackIsUp() {
        let local = Self.route("10.0.0.1", prefix: 32, via: Self.eth0, kind: .local, table: Route.tableLocal)
        let connected = Self.route("10.0.0.0", prefix: 24, via: Self.eth0)
        let state = RoutingState(links: [Self.loopback, Self.eth0], routes: [local, connected])
        let path = evaluate(state, .addresses([Self.address("10.0.0.1")]))
        #expect(path.interfaceName == "lo")
        #expect(path.interfaceType == .loopback)
        #expect(path.status == .reachableViaWiFi)
        var loopbackDown = Self.loopback
        loopbackDown.flags = Link.flagLoopback
        let withoutLoopback = RoutingState(links: [loopbackDown, Self.eth0], routes: [local, connected])
        #expect(evaluate(withoutLoopback, .addresses([Self.address("10.0.0.1")])).status == .notReachable)
    }

    @Test func aThrowRouteContinuesInTheNextTable() {
        let state = RoutingState(
            links: [Self.eth0, Self.wlan0],
            routes: [
                Self.route("10.0.0.0", prefix: 8, via: Self.eth0, kind: .throw, table: Route.tableMain),
                Self.route(via: Self.wlan0, table: Route.tableDefault),
            ]
        )
        #expect(evaluate(state, .addresses([Self.address("10.2.3.4")])).interfaceName == "wlan0")
    }

    @Test func aDomainIsReachableWhenAnyAddressIsAndReportsTheFirstReachable() {
        let state = RoutingState(links: [Self.eth0], routes: [Self.route("2001:db8::", prefix: 32, via: Self.eth0)])
        let path = evaluate(state, .addresses([Self.address("192.0.2.1"), Self.address("2001:db8::5")]))
        #expect(path.status == .reachableViaEthernet)
        #expect(!path.supportsIPv4 && path.supportsIPv6)
        #expect(evaluate(state, .addresses([])).status == .notReachable)
    }

    @Test func multipathRoutesUseTheirFirstUsableHop() {
        var down = Self.wlan0
        down.flags = 0
        var route = Self.route(via: down)
        route.nextHops.append(RoutingState.NextHop(interfaceIndex: Self.eth0.index, gateway: nil, flags: 0))
        let state = RoutingState(links: [down, Self.eth0], routes: [route])
        #expect(evaluate(state, .defaultRoute).interfaceName == "eth0")
    }

    @Test func aLinkGoingDownDropsItsIPv4RoutesAsTheKernelDoesSilently() {
        var state = RoutingState(
            links: [Self.eth0],
            routes: [Self.route(via: Self.eth0), Self.route(via: Self.eth0, family: .ipv6)]
        )
        var down = Self.eth0
        down.flags = 0
        state.updateLink(down)
        #expect(state.routes.count == 1)
        #expect(state.routes.values.first?.family == .ipv6)
    }

    @Test func aReplacingRouteRemovesTheRouteWithTheSameKey() {
        var state = RoutingState(links: [Self.eth0, Self.wlan0], routes: [Self.route(via: Self.eth0)])
        state.addRoute(Self.route(via: Self.wlan0), replacing: true)
        #expect(state.routes.count == 1)
        #expect(evaluate(state, .defaultRoute).interfaceName == "wlan0")
        state.addRoute(Self.route(via: Self.eth0), replacing: false)
        #expect(state.routes.count == 2)
        state.removeRoute(Self.route(via: Self.wlan0))
        #expect(evaluate(state, .defaultRoute).interfaceName == "eth0")
    }

    @Test func removingALinkRemovesItsAddressesAndRoutes() {
        var state = RoutingState(
            links: [Self.eth0],
            addresses: [RoutingState.Address(interfaceIndex: 2, address: Self.address("10.0.0.1"), prefixLength: 24)],
            routes: [Self.route(via: Self.eth0)]
        )
        state.removeLink(index: 2)
        #expect(state.links.isEmpty && state.addresses.isEmpty && state.routes.isEmpty)
    }

    @Test(arguments: [
        ("10.1.2.3", "10.1.0.0", 16, true), ("10.2.0.0", "10.1.0.0", 16, false), ("10.1.2.3", "10.1.2.0", 23, true),
        ("10.1.4.3", "10.1.2.0", 23, false), ("2001:db8::1", "2001:db8::", 32, true),
        ("2001:db9::1", "2001:db8::", 32, false),
        ("10.0.0.1", "2001:db8::", 0, true),
    ])
    func prefixesCoverTheRightAddresses(address: String, network: String, length: Int, covered: Bool) {
        #expect(Self.address(address).isCovered(by: Self.address(network), prefixLength: length) == covered)
    }

    /// Found by FuzzNetlink: routes equal on prefix and metric (a unicast and an unreachable one, or two unicast ones
    /// over different links) were searched in the order of the routes dictionary, so one state could give two
    /// answers. They are now searched in a fixed order: the same answer whatever order the routes came in.
    @Test func routesEqualOnPrefixAndMetricAreSearchedInAFixedOrder() {
        let address = Self.address("192.0.2.1")
        let pairs: [[Route]] = [
            [
                Self.route("192.0.2.0", prefix: 24, via: Self.wlan0, kind: .unreachable),
                Self.route("192.0.2.0", prefix: 24, via: Self.eth0),
            ],
            [
                Self.route("192.0.2.0", prefix: 24, via: Self.wlan0),
                Self.route("192.0.2.0", prefix: 24, via: Self.eth0),
            ],
        ]
        for routes in pairs {
            let forward = RoutingState(links: [Self.eth0, Self.wlan0], routes: routes)
            let backward = RoutingState(links: [Self.eth0, Self.wlan0], routes: routes.reversed())
            let path = evaluate(forward, .addresses([address]))
            #expect(path.interfaceName == "eth0")
            for _ in 0..<20 {
                #expect(evaluate(backward, .addresses([address])) == path)
            }
        }
    }

    /// Found by FuzzNetlink after the fix above: a deletion that matches no route exactly (it names fewer next hops,
    /// or other gateways) fell back to the first route with its key in the order of the routes dictionary, which
    /// differs between two equal states, so the same messages could leave different routes. The fallback now
    /// prefers a route through the links the deletion names, then the first in the search order.
    @Test func aDeletionMatchingRoutesOnlyByKeyRemovesTheSameOneWhateverTheOrder() {
        let routes = [Self.route(via: Self.eth0), Self.route(via: Self.wlan0)]
        var withoutHops = Self.route(via: Self.eth0)
        withoutHops.nextHops = []
        var throughWlan0 = Self.route(via: Self.wlan0)
        throughWlan0.nextHops[0].gateway = Self.address("192.0.2.1")
        for (deletion, remaining) in [(withoutHops, "wlan0"), (throughWlan0, "eth0")] {
            for order in [routes, routes.reversed()] {
                // Each state is a new dictionary, with its own order.
                for _ in 0..<32 {
                    var state = RoutingState(links: [Self.eth0, Self.wlan0], routes: order)
                    state.removeRoute(deletion)
                    #expect(state.routes.count == 1)
                    #expect(evaluate(state, .defaultRoute).interfaceName == remaining)
                }
            }
        }
    }
}
