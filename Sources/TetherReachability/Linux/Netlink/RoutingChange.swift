#if os(Linux)
import CTetherNetlink
import Glibc

/// One change to the routing state, decoded from an rtnetlink message.
enum RoutingChange: Sendable, Hashable {
    case link(RoutingState.Link)
    case linkRemoved(index: Int32)
    case address(RoutingState.Address)
    case addressRemoved(RoutingState.Address)
    case route(RoutingState.Route, replacing: Bool)
    case routeRemoved(RoutingState.Route)
    case rule(RoutingState.Rule)
    case ruleRemoved(RoutingState.Rule)

    /// Decodes `message`; `nil` for messages that do not change reachability (other families, bridge port
    /// notifications, malformed payloads).
    init?(_ message: NetlinkMessage) {
        switch Int32(message.type) {
        case Int32(RTM_NEWLINK), Int32(RTM_DELLINK):
            guard let link = Self.decodeLink(message.payload) else { return nil }
            self = Int32(message.type) == Int32(RTM_NEWLINK) ? .link(link) : .linkRemoved(index: link.index)
        case Int32(RTM_NEWADDR), Int32(RTM_DELADDR):
            guard let address = Self.decodeAddress(message.payload) else { return nil }
            self = Int32(message.type) == Int32(RTM_NEWADDR) ? .address(address) : .addressRemoved(address)
        case Int32(RTM_NEWROUTE), Int32(RTM_DELROUTE):
            guard let route = Self.decodeRoute(message.payload) else { return nil }
            if Int32(message.type) == Int32(RTM_NEWROUTE) {
                self = .route(route, replacing: Int32(message.flags) & NLM_F_REPLACE != 0)
            } else {
                self = .routeRemoved(route)
            }
        case Int32(RTM_NEWRULE), Int32(RTM_DELRULE):
            guard let rule = Self.decodeRule(message.payload) else { return nil }
            self = Int32(message.type) == Int32(RTM_NEWRULE) ? .rule(rule) : .ruleRemoved(rule)
        default:
            return nil
        }
    }

    private static func family(_ value: UInt8) -> IPAddressBytes.Family? {
        switch Int32(value) {
        case AF_INET: .ipv4
        case AF_INET6: .ipv6
        default: nil
        }
    }

    private static func decodeLink(_ payload: [UInt8]) -> RoutingState.Link? {
        guard payload.count >= MemoryLayout<ifinfomsg>.size else { return nil }
        let header = payload.withUnsafeBytes { $0.loadUnaligned(as: ifinfomsg.self) }
        // AF_BRIDGE messages describe bridge ports, not the link itself (a DELLINK there only leaves a bridge).
        guard header.ifi_family == UInt8(AF_UNSPEC) else { return nil }
        let attributes = NetlinkAttributes(
            parsing: payload,
            from: Int(tether_ifinfomsg_attributes_offset())
        )
        let linkInfo = attributes[UInt16(IFLA_LINKINFO)].map { NetlinkAttributes(parsing: $0, from: 0) }
        return RoutingState.Link(
            index: header.ifi_index,
            name: attributes.string(UInt16(IFLA_IFNAME)) ?? "",
            flags: header.ifi_flags,
            hardwareType: header.ifi_type,
            driver: linkInfo?.string(UInt16(IFLA_INFO_KIND)),
            group: attributes.uint32(UInt16(IFLA_GROUP)) ?? 0
        )
    }

    private static func decodeAddress(_ payload: [UInt8]) -> RoutingState.Address? {
        guard payload.count >= MemoryLayout<ifaddrmsg>.size else { return nil }
        let header = payload.withUnsafeBytes { $0.loadUnaligned(as: ifaddrmsg.self) }
        guard let family = family(header.ifa_family) else { return nil }
        let attributes = NetlinkAttributes(
            parsing: payload,
            from: Int(tether_ifaddrmsg_attributes_offset())
        )
        // IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer's on point-to-point IPv4 links.
        guard let bytes = attributes[UInt16(IFA_LOCAL)] ?? attributes[UInt16(IFA_ADDRESS)],
            let address = IPAddressBytes(family: family, bytes: bytes)
        else { return nil }
        return RoutingState.Address(
            interfaceIndex: Int32(bitPattern: header.ifa_index),
            address: address,
            prefixLength: header.ifa_prefixlen
        )
    }

    private static func decodeRoute(_ payload: [UInt8]) -> RoutingState.Route? {
        guard payload.count >= MemoryLayout<rtmsg>.size else { return nil }
        let header = payload.withUnsafeBytes { $0.loadUnaligned(as: rtmsg.self) }
        guard let family = family(header.rtm_family),
            let kind = RoutingState.Route.Kind(rawValue: header.rtm_type)
        else { return nil }
        let attributes = NetlinkAttributes(
            parsing: payload,
            from: Int(tether_rtmsg_attributes_offset())
        )
        let gateway = attributes[UInt16(RTA_GATEWAY.rawValue)].flatMap { IPAddressBytes(family: family, bytes: $0) }
        var hops: [RoutingState.NextHop] = []
        if let multipath = attributes[UInt16(RTA_MULTIPATH.rawValue)] {
            hops = decodeNextHops(multipath, family: family)
        } else if let interface = attributes.uint32(UInt16(RTA_OIF.rawValue)) {
            hops = [
                RoutingState.NextHop(
                    interfaceIndex: Int32(bitPattern: interface),
                    gateway: gateway,
                    flags: header.rtm_flags & 0xFF
                )
            ]
        }
        return RoutingState.Route(
            family: family,
            table: attributes.uint32(UInt16(RTA_TABLE.rawValue)) ?? UInt32(header.rtm_table),
            kind: kind,
            destination: header.rtm_dst_len == 0
                ? nil
                : attributes[UInt16(RTA_DST.rawValue)].flatMap { IPAddressBytes(family: family, bytes: $0) },
            prefixLength: header.rtm_dst_len,
            typeOfService: header.rtm_tos,
            priority: attributes.uint32(UInt16(RTA_PRIORITY.rawValue)) ?? 0,
            nextHops: hops
        )
    }

    private static func decodeRule(_ payload: [UInt8]) -> RoutingState.Rule? {
        guard payload.count >= MemoryLayout<fib_rule_hdr>.size else { return nil }
        let header = payload.withUnsafeBytes { $0.loadUnaligned(as: fib_rule_hdr.self) }
        guard let family = family(header.family) else { return nil }
        let attributes = NetlinkAttributes(parsing: payload, from: Int(tether_fib_rule_hdr_attributes_offset()))
        // The kernel dumps the unset suppressors as -1.
        let unset = UInt32.max
        var rule = RoutingState.Rule(
            family: family,
            priority: attributes.uint32(UInt16(FRA_PRIORITY)) ?? 0,
            action: RoutingState.Rule.Action(rawValue: header.action) ?? .unspecified,
            table: attributes.uint32(UInt16(FRA_TABLE)) ?? UInt32(header.table),
            flags: header.flags
        )
        rule.sourceLength = header.src_len
        rule.source = attributes[UInt16(FRA_SRC)].flatMap { IPAddressBytes(family: family, bytes: $0) }
        rule.destinationLength = header.dst_len
        rule.destination = attributes[UInt16(FRA_DST)].flatMap { IPAddressBytes(family: family, bytes: $0) }
        rule.typeOfService = header.tos
        rule.inputInterface = attributes.string(UInt16(FRA_IIFNAME))
        rule.outputInterface = attributes.string(UInt16(FRA_OIFNAME))
        rule.firewallMark = attributes.uint32(UInt16(FRA_FWMARK)) ?? 0
        // A mark without a mask is compared whole.
        rule.firewallMask = attributes.uint32(UInt16(FRA_FWMASK)) ?? (rule.firewallMark != 0 ? unset : 0)
        rule.gotoTarget = attributes.uint32(UInt16(FRA_GOTO))
        rule.suppressPrefixLength = attributes.uint32(UInt16(FRA_SUPPRESS_PREFIXLEN)).flatMap { $0 == unset ? nil : $0 }
        rule.suppressInterfaceGroup = attributes.uint32(UInt16(FRA_SUPPRESS_IFGROUP)).flatMap { $0 == unset ? nil : $0 }
        if let tunnel = attributes[UInt16(FRA_TUN_ID)], tunnel.count >= 8 {
            rule.tunnelID = tunnel.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        }
        rule.isL3MasterDevice = attributes[UInt16(FRA_L3MDEV)]?.first.map { $0 != 0 } ?? false
        rule.ipProtocol = attributes[UInt16(FRA_IP_PROTO)]?.first ?? 0
        rule.sourcePorts = portRange(attributes[UInt16(FRA_SPORT_RANGE)])
        rule.destinationPorts = portRange(attributes[UInt16(FRA_DPORT_RANGE)])
        if let range = attributes[UInt16(FRA_UID_RANGE)], range.count >= 8 {
            let start = range.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            let end = range.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self) }
            rule.userIDs = start <= end ? start...end : nil
        }
        return rule
    }

    /// A `fib_rule_port_range` (two `u16`, start and end); `nil` when absent or empty.
    private static func portRange(_ bytes: [UInt8]?) -> ClosedRange<UInt16>? {
        guard let bytes, bytes.count >= 4 else { return nil }
        let start = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) }
        let end = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 2, as: UInt16.self) }
        guard start != 0 || end != 0 else { return nil }
        return start <= end ? start...end : start...start
    }

    private static func decodeNextHops(_ bytes: [UInt8], family: IPAddressBytes.Family) -> [RoutingState.NextHop] {
        var hops: [RoutingState.NextHop] = []
        let headerSize = MemoryLayout<rtnexthop>.size
        var offset = 0
        while offset + headerSize <= bytes.count {
            let hop = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: rtnexthop.self) }
            let length = Int(hop.rtnh_len)
            guard length >= headerSize, offset + length <= bytes.count else { break }
            let attributes = NetlinkAttributes(
                parsing: Array(bytes[offset..<(offset + length)]),
                from: Int(tether_rtnh_align(UInt32(headerSize)))
            )
            hops.append(
                RoutingState.NextHop(
                    interfaceIndex: hop.rtnh_ifindex,
                    gateway: attributes[UInt16(RTA_GATEWAY.rawValue)].flatMap {
                        IPAddressBytes(family: family, bytes: $0)
                    },
                    flags: UInt32(hop.rtnh_flags)
                )
            )
            offset += Int(tether_rtnh_align(UInt32(length)))
        }
        return hops
    }
}
#endif
