extension RoutingState {
    /// What an evaluation asks about.
    enum Destination: Sendable, Hashable {
        /// Whether a packet to any destination would be routed (IPv4 or IPv6): AFNetworking's zero-address manager.
        case defaultRoute
        /// Whether any of these addresses has a usable route (an address manager, or a resolved domain).
        case addresses([IPAddressBytes])
    }

    /// What one lookup found, as `ip route get` would say it.
    enum LookupResult: Sendable, Hashable {
        /// This route serves the destination through this link, chosen by the rule of this priority.
        case reachable(Route, egress: Link, rulePriority: UInt32)
        /// A route or a rule of this kind refuses it (`unreachable`, `blackhole`, `prohibit`; `local` while the
        /// loopback device is down).
        case blocked(Route.Kind)
        /// No rule led to a table with a usable route.
        case noRoute
    }

    /// What one table lookup found.
    private enum TableResult {
        case found(Route, Link)
        case blocked(Route.Kind)
        case notFound
    }

    /// Evaluates reachability of `destination` over this state.
    ///
    /// Reachable means the kernel would route a packet to the destination over a link that is up and running: the
    /// policy rules in priority order (see ``lookup(_:)``), in each table the longest matching prefix, then the
    /// lowest metric; an unreachable, blackhole or prohibit route or rule ends the search; a local route is
    /// delivered through the loopback link.
    /// - Parameters:
    ///   - destination: what to evaluate.
    ///   - userID: the user the lookup is made for (`uidrange` rules).
    ///   - classify: the kind of an egress link (sysfs on a real system, a table in tests).
    /// - Returns: the path, with the egress interface and the serving route when reachable.
    func evaluate(
        _ destination: Destination,
        userID: UInt32 = 0,
        classify: (Link) -> NetworkPath.InterfaceType
    ) -> NetworkPath {
        var served: [(route: Route, egress: Link, rule: UInt32)] = []
        switch destination {
        case .defaultRoute:
            for family in [IPAddressBytes.Family.ipv4, .ipv6] {
                let flow = LookupFlow(destination: nil, family: family, userID: userID)
                if case .reachable(let route, let egress, let rule) = lookup(flow) {
                    served.append((route, egress, rule))
                }
            }
            // Lowest metric wins; IPv4 before IPv6 at an equal metric.
            served.sort { lhs, rhs in
                (lhs.route.priority, lhs.route.family == .ipv4 ? 0 : 1)
                    < (rhs.route.priority, rhs.route.family == .ipv4 ? 0 : 1)
            }
        case .addresses(let addresses):
            for address in addresses {
                let flow = LookupFlow(destination: address, family: address.family, userID: userID)
                if case .reachable(let route, let egress, let rule) = lookup(flow) {
                    served.append((route, egress, rule))
                }
            }
        }
        guard let first = served.first else { return NetworkPath(status: .notReachable) }
        return .reachable(
            via: first.egress,
            type: classify(first.egress),
            route: NetworkPath.Route(first.route, egress: first.egress.index, rulePriority: first.rule),
            supportsIPv4: served.contains { $0.route.family == .ipv4 },
            supportsIPv6: served.contains { $0.route.family == .ipv6 }
        )
    }

    /// The route the kernel would use for `flow`, as `fib_rules_lookup` walks the rules: each matching rule in
    /// priority order; `goto` jumps to the first rule of its target priority, `nop` goes on, `blackhole`,
    /// `unreachable` and `prohibit` end the search; a table lookup that finds nothing or a `throw` route goes on
    /// to the next rule, as does a result that the rule's `suppress_prefixlength` or `suppress_ifgroup` rejects.
    func lookup(_ flow: LookupFlow) -> LookupResult {
        let rules = rules(for: flow.family)
        var index = rules.startIndex
        while index < rules.endIndex {
            let rule = rules[index]
            index += 1
            guard ruleMatches(rule, flow) else { continue }
            switch rule.action {
            case .goto:
                // A target that names no later rule is unresolved: the kernel skips the rule.
                if let target = rule.gotoTarget,
                    let position = rules[index...].firstIndex(where: { $0.priority == target })
                {
                    index = position
                }
            case .nop, .unspecified:
                continue
            case .blackhole:
                return .blocked(.blackhole)
            case .unreachable:
                return .blocked(.unreachable)
            case .prohibit:
                return .blocked(.prohibit)
            case .toTable:
                switch lookup(flow, inTable: rule.table) {
                case .found(let route, let egress):
                    if let length = rule.suppressPrefixLength, UInt32(route.prefixLength) <= length { continue }
                    if let group = rule.suppressInterfaceGroup, egress.group == group { continue }
                    return .reachable(route, egress: egress, rulePriority: rule.priority)
                case .blocked(let kind):
                    return .blocked(kind)
                case .notFound:
                    continue
                }
            }
        }
        return .noRoute
    }

    /// The route of `table` that serves `flow`: the longest matching prefix first, skipping routes whose next hops
    /// are all down; a blocking route ends the search, a `throw` route ends it in this table only.
    private func lookup(_ flow: LookupFlow, inTable table: UInt32) -> TableResult {
        let candidates = routes.values
            .filter { route in
                guard route.family == flow.family, route.table == table else { return false }
                guard let destination = flow.destination else { return route.prefixLength == 0 }
                return destination.isCovered(by: route.destination, prefixLength: Int(route.prefixLength))
            }
            .sorted(by: Self.searchOrder)
        for route in candidates {
            switch route.kind {
            case .local:
                // Local delivery goes through the loopback device; with it down nothing is delivered.
                let loopback = links.values.filter(\.isLoopback).min { $0.index < $1.index }
                guard let loopback, loopback.isUsable else { return .blocked(.local) }
                return .found(route, loopback)
            case .unicast, .broadcast, .multicast, .anycast:
                // A route over a link that is down or lost its carrier does not count; a shorter prefix may.
                if let egress = usableEgress(of: route) {
                    return .found(route, egress)
                }
            case .unreachable, .blackhole, .prohibit:
                return .blocked(route.kind)
            case .throw:
                return .notFound
            case .unspecified, .nat, .externalResolve:
                continue
            }
        }
        return .notFound
    }

    /// The link a packet to `address` would leave through, or `nil` when it has no usable route.
    func egressLink(toward address: IPAddressBytes, userID: UInt32 = 0) -> Link? {
        let flow = LookupFlow(destination: address, family: address.family, userID: userID)
        guard case .reachable(_, let egress, _) = lookup(flow) else { return nil }
        return egress
    }

    /// Longest prefix first, then lowest metric; routes equal on both (which the kernel keeps, say a unicast and an
    /// unreachable route) in a fixed order, so that one state always gives one answer (found by `FuzzNetlink`: the
    /// order of the routes dictionary decided, and an evaluation could differ from the one before on the same state).
    /// Total over the routes a state can hold side by side (the next hops' gateways decide last), so that a deletion
    /// matching several routes by key removes one chosen the same way every time.
    static func searchOrder(_ lhs: Route, _ rhs: Route) -> Bool {
        if lhs.prefixLength != rhs.prefixLength { return lhs.prefixLength > rhs.prefixLength }
        if lhs.priority != rhs.priority { return lhs.priority < rhs.priority }
        if lhs.typeOfService != rhs.typeOfService { return lhs.typeOfService < rhs.typeOfService }
        if lhs.kind != rhs.kind { return lhs.kind.rawValue < rhs.kind.rawValue }
        let left = lhs.nextHops.map(\.interfaceIndex)
        let right = rhs.nextHops.map(\.interfaceIndex)
        if left != right { return left.lexicographicallyPrecedes(right) }
        let leftDestination = lhs.destination?.bytes ?? []
        let rightDestination = rhs.destination?.bytes ?? []
        if leftDestination != rightDestination { return leftDestination.lexicographicallyPrecedes(rightDestination) }
        return Self.gatewayBytes(lhs).lexicographicallyPrecedes(Self.gatewayBytes(rhs))
    }

    /// The next hops' gateways as one byte string: per hop, whether it has one, then its bytes.
    private static func gatewayBytes(_ route: Route) -> [UInt8] {
        route.nextHops.flatMap { hop in hop.gateway.map { [1] + $0.bytes } ?? [0] }
    }

    /// The first next hop's link that is up and running.
    ///
    /// The next hop's `linkdown`/`dead` flags are not consulted: the kernel sets and clears them when a link loses
    /// or regains its carrier without announcing the routes again, so a dumped flag goes stale; the link's own
    /// `IFF_UP | IFF_RUNNING`, which every change announces, says the same thing and stays current.
    func usableEgress(of route: Route) -> Link? {
        for hop in route.nextHops {
            if let link = links[hop.interfaceIndex], link.isUsable {
                return link
            }
        }
        return nil
    }
}
