extension RoutingState {
    /// What an evaluation asks about.
    enum Destination: Sendable, Hashable {
        /// Whether a usable default route (IPv4 or IPv6) exists: AFNetworking's zero-address manager.
        case defaultRoute
        /// Whether any of these addresses has a usable route (an address manager, or a resolved domain).
        case addresses([IPAddressBytes])
    }

    /// Evaluates reachability of `destination` over this state.
    ///
    /// Reachable means the kernel would route a packet to the destination over a link that is up and running: the
    /// longest matching prefix in the local, main and default tables, in that order (policy rules are not
    /// consulted), skipping routes whose next hops are all down or `linkdown`; an unreachable, blackhole or
    /// prohibit route ends the search; a local route is delivered through the loopback link.
    /// - Parameters:
    ///   - destination: what to evaluate.
    ///   - classify: the kind of an egress link (sysfs on a real system, a table in tests).
    /// - Returns: the path, with the egress interface when reachable.
    func evaluate(
        _ destination: Destination,
        classify: (Link) -> NetworkPath.InterfaceType
    ) -> NetworkPath {
        switch destination {
        case .defaultRoute:
            return evaluateDefaultRoute(classify: classify)
        case .addresses(let addresses):
            var first: Link?
            var supportsIPv4 = false
            var supportsIPv6 = false
            for address in addresses {
                guard let egress = egressLink(toward: address) else { continue }
                first = first ?? egress
                if address.family == .ipv4 { supportsIPv4 = true } else { supportsIPv6 = true }
            }
            guard let first else { return NetworkPath(status: .notReachable) }
            return .reachable(
                via: first.name,
                type: classify(first),
                supportsIPv4: supportsIPv4,
                supportsIPv6: supportsIPv6
            )
        }
    }

    /// The link a packet to `address` would leave through, or `nil` when it has no usable route.
    func egressLink(toward address: IPAddressBytes) -> Link? {
        for table in [Route.tableLocal, Route.tableMain, Route.tableDefault] {
            let candidates = routes.values
                .filter {
                    $0.family == address.family && $0.table == table
                        && address.isCovered(by: $0.destination, prefixLength: Int($0.prefixLength))
                }
                .sorted(by: Self.searchOrder)
            search: for route in candidates {
                switch route.kind {
                case .local:
                    // Local delivery goes through the loopback device; with it down nothing is delivered.
                    let loopback = links.values.filter(\.isLoopback).min { $0.index < $1.index }
                    guard let loopback, loopback.isUsable else {
                        return nil
                    }
                    return loopback
                case .unicast, .broadcast, .multicast, .anycast:
                    // A route over a link that is down or lost its carrier does not count; a shorter prefix may.
                    if let egress = usableEgress(of: route) {
                        return egress
                    }
                case .unreachable, .blackhole, .prohibit:
                    return nil
                case .throw:
                    break search
                case .unspecified, .nat, .externalResolve:
                    continue
                }
            }
        }
        return nil
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

    private func evaluateDefaultRoute(classify: (Link) -> NetworkPath.InterfaceType) -> NetworkPath {
        let usable = routes.values.compactMap { route -> (Route, Link)? in
            guard route.prefixLength == 0, route.kind == .unicast,
                route.table == Route.tableMain || route.table == Route.tableDefault,
                let egress = usableEgress(of: route)
            else { return nil }
            return (route, egress)
        }
        let best = usable.min { lhs, rhs in
            // Lowest metric wins; IPv4 before IPv6 at equal metric; the index keeps the choice stable.
            (lhs.0.priority, lhs.0.family == .ipv4 ? 0 : 1, lhs.1.index)
                < (rhs.0.priority, rhs.0.family == .ipv4 ? 0 : 1, rhs.1.index)
        }
        guard let (_, egress) = best else { return NetworkPath(status: .notReachable) }
        return .reachable(
            via: egress.name,
            type: classify(egress),
            supportsIPv4: usable.contains { $0.0.family == .ipv4 },
            supportsIPv6: usable.contains { $0.0.family == .ipv6 }
        )
    }
}
