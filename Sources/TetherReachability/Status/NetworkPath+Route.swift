extension NetworkPath {
    /// The route that serves a path's target, as `ip route get` shows it.
    public struct Route: Sendable, Hashable, CustomStringConvertible {
        /// The route's destination: `default`, or a prefix such as `10.1.0.0/16` or `2001:db8::/32`.
        public var destination: String
        /// The next hop's gateway address; `nil` for a directly connected or point-to-point route.
        public var gateway: String?
        /// The routing table that holds the route (254 is `main`, 255 `local`, 253 `default`).
        public var table: UInt32
        /// The route's metric (`RTA_PRIORITY`).
        public var metric: UInt32
        /// The priority of the policy rule (`ip rule`) whose table held the route.
        public var rulePriority: UInt32

        /// Creates a route description.
        /// - Parameters:
        ///   - destination: `default` or a prefix.
        ///   - gateway: the next hop's address, if any.
        ///   - table: the routing table.
        ///   - metric: the route's metric.
        ///   - rulePriority: the priority of the rule that chose the table.
        public init(destination: String, gateway: String? = nil, table: UInt32, metric: UInt32, rulePriority: UInt32) {
            self.destination = destination
            self.gateway = gateway
            self.table = table
            self.metric = metric
            self.rulePriority = rulePriority
        }

        /// `default via 10.0.0.1 table 254 metric 100 rule 32766`, the fields `ip route get` shows.
        public var description: String {
            var text = destination
            if let gateway { text += " via \(gateway)" }
            return text + " table \(table) metric \(metric) rule \(rulePriority)"
        }
    }
}

extension NetworkPath.Route {
    /// The description of a kernel route chosen by the rule of `rulePriority`, leaving through link `egress`.
    init(_ route: RoutingState.Route, egress: Int32, rulePriority: UInt32) {
        let hop = route.nextHops.first { $0.interfaceIndex == egress } ?? route.nextHops.first
        let destination =
            route.prefixLength == 0
            ? "default" : "\(route.destination?.description ?? "?")/\(route.prefixLength)"
        self.init(
            destination: destination,
            gateway: hop?.gateway?.description,
            table: route.table,
            metric: route.priority,
            rulePriority: rulePriority
        )
    }
}
