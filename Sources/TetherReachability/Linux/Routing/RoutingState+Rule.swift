extension RoutingState {
    /// A policy routing rule (`ip rule`, `RTM_NEWRULE`): selectors that a lookup must match, and what to do then.
    struct Rule: Sendable, Hashable {
        /// `FR_ACT_*` (`<linux/fib_rules.h>`).
        enum Action: UInt8, Sendable, Hashable {
            case unspecified = 0
            case toTable = 1
            case goto = 2
            case nop = 3
            case blackhole = 6
            case unreachable = 7
            case prohibit = 8
        }

        /// `FIB_RULE_INVERT`: the rule applies when its selectors do not match (`ip rule add not …`).
        static let flagInvert: UInt32 = 0x2

        var family: IPAddressBytes.Family
        var priority: UInt32
        var action: Action
        var table: UInt32
        var flags: UInt32 = 0
        /// `from PREFIX`; `nil` with a length of 0 for "from all".
        var source: IPAddressBytes? = nil
        var sourceLength: UInt8 = 0
        /// `to PREFIX`; `nil` with a length of 0 for "to all".
        var destination: IPAddressBytes? = nil
        var destinationLength: UInt8 = 0
        /// `tos`/`dsfield`; 0 matches any.
        var typeOfService: UInt8 = 0
        /// `iif NAME` / `oif NAME`.
        var inputInterface: String? = nil
        var outputInterface: String? = nil
        /// `fwmark MARK/MASK`; a mask of 0 matches any mark.
        var firewallMark: UInt32 = 0
        var firewallMask: UInt32 = 0
        /// `goto PRIORITY`.
        var gotoTarget: UInt32? = nil
        /// `suppress_prefixlength N`: a result with a prefix this long or shorter is ignored.
        var suppressPrefixLength: UInt32? = nil
        /// `suppress_ifgroup G`: a result through an interface of this group is ignored.
        var suppressInterfaceGroup: UInt32? = nil
        /// `tun_id`, `l3mdev`, `ipproto`, `sport`, `dport`: selectors a host lookup carries no value for.
        var tunnelID: UInt64 = 0
        var isL3MasterDevice = false
        var ipProtocol: UInt8 = 0
        var sourcePorts: ClosedRange<UInt16>? = nil
        var destinationPorts: ClosedRange<UInt16>? = nil
        /// `uidrange START-END`.
        var userIDs: ClosedRange<UInt32>? = nil

        var isInverted: Bool { flags & Self.flagInvert != 0 }

        /// The rules of a kernel that was never told otherwise: local, main, then default.
        static func defaults(for family: IPAddressBytes.Family) -> [Rule] {
            [
                Rule(family: family, priority: 0, action: .toTable, table: Route.tableLocal),
                Rule(family: family, priority: 32766, action: .toTable, table: Route.tableMain),
                Rule(family: family, priority: 32767, action: .toTable, table: Route.tableDefault),
            ]
        }
    }

    /// What a host lookup carries into the rules: no source address, no mark, no port or protocol, the calling
    /// user, arriving from the loopback device (the kernel's input interface for locally generated packets).
    struct LookupFlow: Sendable, Hashable {
        /// `LOOPBACK_IFINDEX`: every network namespace's loopback device has index 1.
        static let loopbackIndex: Int32 = 1

        /// The destination; `nil` for "any destination" (the zero-address manager: only routes and rules that
        /// cover every destination apply).
        var destination: IPAddressBytes?
        var family: IPAddressBytes.Family
        /// The user the lookup is made for (`uidrange` rules).
        var userID: UInt32
    }

    /// Whether `rule`'s selectors match `flow` (inverted for a `not` rule), as `fib_rule_match` decides.
    func ruleMatches(_ rule: Rule, _ flow: LookupFlow) -> Bool {
        rule.isInverted ? !selectorsMatch(rule, flow) : selectorsMatch(rule, flow)
    }

    private func selectorsMatch(_ rule: Rule, _ flow: LookupFlow) -> Bool {
        if let input = rule.inputInterface {
            // The kernel resolves the name to an index (-1 when no such link exists) and compares it with the
            // flow's input interface: loopback for a locally generated packet.
            guard links[LookupFlow.loopbackIndex]?.name == input else { return false }
        }
        // A host lookup names no output interface, so a rule bound to one never matches.
        if rule.outputInterface != nil { return false }
        // The flow's mark is 0.
        if rule.firewallMark & rule.firewallMask != 0 { return false }
        if rule.tunnelID != 0 || rule.isL3MasterDevice || rule.ipProtocol != 0 || rule.typeOfService != 0 {
            return false
        }
        if let userIDs = rule.userIDs, !userIDs.contains(flow.userID) { return false }
        // The flow's ports are 0.
        if let ports = rule.sourcePorts, !ports.contains(0) { return false }
        if let ports = rule.destinationPorts, !ports.contains(0) { return false }
        if rule.sourceLength > 0 {
            // No source address: IPv4 compares 0.0.0.0 with the prefix, IPv6 does not match without a source.
            guard flow.family == .ipv4,
                IPAddressBytes(family: .ipv4, bytes: [0, 0, 0, 0])!
                    .isCovered(by: rule.source, prefixLength: Int(rule.sourceLength))
            else { return false }
        }
        if rule.destinationLength > 0 {
            guard let destination = flow.destination,
                destination.isCovered(by: rule.destination, prefixLength: Int(rule.destinationLength))
            else { return false }
        }
        return true
    }

    /// The rules a lookup of `family` walks: the kernel's, or its defaults when none of that family are known.
    func rules(for family: IPAddressBytes.Family) -> [Rule] {
        let known = rules.filter { $0.family == family }
        return known.isEmpty ? Rule.defaults(for: family) : known
    }
}
