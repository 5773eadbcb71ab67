/// The kernel's links, addresses, policy rules and routes as the netlink back-end last heard of them.
///
/// A pure value: the netlink session applies decoded messages to it, and ``RoutingState/evaluate(_:classify:)``
/// answers reachability from it, so both are tested without sockets.
struct RoutingState: Sendable, Equatable {
    /// A network interface (`RTM_NEWLINK`).
    struct Link: Sendable, Hashable {
        /// `IFF_UP`, `IFF_LOOPBACK`, `IFF_POINTOPOINT`, `IFF_RUNNING` (`<linux/if.h>`).
        static let flagUp: UInt32 = 0x1
        static let flagLoopback: UInt32 = 0x8
        static let flagPointToPoint: UInt32 = 0x10
        static let flagRunning: UInt32 = 0x40
        /// `ARPHRD_LOOPBACK`.
        static let hardwareTypeLoopback: UInt16 = 772

        var index: Int32
        var name: String
        var flags: UInt32
        /// The ARPHRD_* type (`ifi_type`).
        var hardwareType: UInt16
        /// The driver's kind (`IFLA_INFO_KIND`: "wireguard", "tun", "veth", "gre"); `nil` for a physical device.
        var driver: String? = nil
        /// The interface group (`IFLA_GROUP`), which `suppress_ifgroup` rules test.
        var group: UInt32 = 0

        /// Up and running: administratively up with a carrier (`IFF_UP | IFF_RUNNING`).
        var isUsable: Bool { flags & Self.flagUp != 0 && flags & Self.flagRunning != 0 }
        var isLoopback: Bool { flags & Self.flagLoopback != 0 || hardwareType == Self.hardwareTypeLoopback }
    }

    /// An interface address (`RTM_NEWADDR`).
    struct Address: Sendable, Hashable {
        var interfaceIndex: Int32
        var address: IPAddressBytes
        var prefixLength: UInt8
    }

    /// One next hop of a route.
    struct NextHop: Sendable, Hashable {
        /// `RTNH_F_DEAD` and `RTNH_F_LINKDOWN`, as the kernel last dumped them (kept, not trusted: see
        /// `usableEgress(of:)`).
        static let linkDownFlags: UInt32 = 0x1 | 0x10

        var interfaceIndex: Int32
        var gateway: IPAddressBytes?
        var flags: UInt32
    }

    /// A route (`RTM_NEWROUTE`).
    struct Route: Sendable, Hashable {
        /// `RTN_*` route types (`<linux/rtnetlink.h>`).
        enum Kind: UInt8, Sendable, Hashable {
            case unspecified = 0
            case unicast
            case local
            case broadcast
            case anycast
            case multicast
            case blackhole
            case unreachable
            case prohibit
            case `throw`
            case nat
            case externalResolve
        }

        /// `RT_TABLE_DEFAULT`, `RT_TABLE_MAIN`, `RT_TABLE_LOCAL`.
        static let tableDefault: UInt32 = 253
        static let tableMain: UInt32 = 254
        static let tableLocal: UInt32 = 255

        var family: IPAddressBytes.Family
        var table: UInt32
        var kind: Kind
        /// `nil` for a default route (prefix length 0).
        var destination: IPAddressBytes?
        var prefixLength: UInt8
        var typeOfService: UInt8
        var priority: UInt32
        var nextHops: [NextHop]

        /// What identifies a route for the kernel: two routes with the same key replace each other.
        struct Key: Sendable, Hashable {
            var family: IPAddressBytes.Family
            var table: UInt32
            var destination: IPAddressBytes?
            var prefixLength: UInt8
            var typeOfService: UInt8
            var priority: UInt32
        }

        var key: Key {
            Key(
                family: family,
                table: table,
                destination: destination,
                prefixLength: prefixLength,
                typeOfService: typeOfService,
                priority: priority
            )
        }

        /// The identity used for one entry: the key plus the next hops (IPv6 keeps equal-key routes side by side).
        struct Identity: Sendable, Hashable {
            var key: Key
            var hops: [Int32]
            var gateways: [IPAddressBytes?]
        }

        var identity: Identity {
            Identity(key: key, hops: nextHops.map(\.interfaceIndex), gateways: nextHops.map(\.gateway))
        }
    }

    private(set) var links: [Int32: Link] = [:]
    private(set) var addresses: Set<Address> = []
    private(set) var routes: [Route.Identity: Route] = [:]
    /// The policy rules of both families in the kernel's order (by priority, then in the order they were added).
    private(set) var rules: [Rule] = []

    init() {}

    init(links: [Link], addresses: [Address] = [], rules: [Rule] = [], routes: [Route]) {
        for link in links { self.links[link.index] = link }
        self.addresses = Set(addresses)
        for rule in rules { addRule(rule) }
        for route in routes { self.routes[route.identity] = route }
    }

    // MARK: Applying changes

    /// Adds or updates a link. A link that goes administratively down loses its IPv4 routes, as in the kernel,
    /// which flushes them without telling listeners.
    mutating func updateLink(_ link: Link) {
        links[link.index] = link
        if link.flags & Link.flagUp == 0 {
            routes = routes.filter { _, route in
                !(route.family == .ipv4 && route.nextHops.contains { $0.interfaceIndex == link.index })
            }
        }
    }

    /// Removes a link with its addresses and the routes through it.
    mutating func removeLink(index: Int32) {
        links[index] = nil
        addresses = addresses.filter { $0.interfaceIndex != index }
        routes = routes.filter { _, route in !route.nextHops.contains { $0.interfaceIndex == index } }
    }

    mutating func addAddress(_ address: Address) { addresses.insert(address) }

    mutating func removeAddress(_ address: Address) { addresses.remove(address) }

    /// Adds a route; with `replacing`, first removes the routes with the same key (`NLM_F_REPLACE`).
    mutating func addRoute(_ route: Route, replacing: Bool) {
        if replacing {
            let key = route.key
            routes = routes.filter { _, existing in existing.key != key }
        }
        routes[route.identity] = route
    }

    mutating func removeRoute(_ route: Route) {
        if routes.removeValue(forKey: route.identity) == nil {
            // A deletion may name fewer next hops than the addition did; fall back to the key, preferring a route
            // through the links the deletion names, then the first in the search order. Not the dictionary's
            // order, which differs between two equal states (found by `FuzzNetlink`).
            let key = route.key
            let named = Set(route.nextHops.map(\.interfaceIndex))
            let matches = routes.values.filter { $0.key == key }
            let through = matches.filter { named.isSubset(of: $0.nextHops.map(\.interfaceIndex)) }
            if let match = (through.isEmpty ? matches : through).min(by: Self.searchOrder) {
                routes[match.identity] = nil
            }
        }
    }

    mutating func removeAllLinks() { links = [:] }
    mutating func removeAllAddresses() { addresses = [] }
    mutating func removeAllRoutes() { routes = [:] }

    /// Adds a rule after the rules of the same or a lower priority, where the kernel puts it.
    mutating func addRule(_ rule: Rule) {
        let position = rules.firstIndex { $0.priority > rule.priority } ?? rules.endIndex
        rules.insert(rule, at: position)
    }

    /// Removes the first rule equal to `rule`.
    mutating func removeRule(_ rule: Rule) {
        if let position = rules.firstIndex(of: rule) {
            rules.remove(at: position)
        }
    }

    mutating func removeAllRules() { rules = [] }
}
