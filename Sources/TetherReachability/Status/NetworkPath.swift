/// A snapshot of one reachability evaluation: the status plus what is known about the egress interface.
public struct NetworkPath: Sendable, Hashable {
    /// The kind of interface a path leaves through.
    public enum InterfaceType: String, Sendable, Hashable {
        /// A Wi-Fi (802.11) interface.
        case wifi
        /// A cellular (WWAN) interface: a mobile-broadband modem.
        case cellular
        /// Wired Ethernet, and any other Ethernet-framed link (veth, virtio, dummy).
        case wiredEthernet
        /// The loopback interface: the target is this host.
        case loopback
        /// Anything else: tunnels and VPNs (see ``NetworkPath/interfaceKind`` to tell them apart).
        case other
    }

    /// The reachability status of the evaluation.
    public var status: NetworkReachabilityStatus
    /// The egress interface ("eth0", "wlan0", "wwan0"); `nil` when the target is not reachable.
    public var interfaceName: String?
    /// The kind of the egress interface; `nil` when the target is not reachable.
    public var interfaceType: InterfaceType?
    /// Whether the path is expensive: cellular (or, on Apple platforms, a personal hotspot).
    ///
    /// On Linux it is based on the egress interface alone: a mobile-broadband modem (sysfs `DEVTYPE=wwan`,
    /// `ARPHRD_RAWIP`) or a PPP link. A VPN carried over a cellular link is not seen as expensive: the kernel does not
    /// say which link carries a tunnel's packets.
    public var isExpensive: Bool
    /// Whether the path is constrained (Low Data Mode on Apple platforms). Linux has no such setting: always `false`
    /// there.
    public var isConstrained: Bool
    /// What the egress interface is, beyond AFNetworking's kinds: a VPN, a tunnel, loopback; `nil` when the target
    /// is not reachable. ``interfaceType`` and ``status`` keep AFNetworking's kinds for ported code.
    public var interfaceKind: InterfaceKind?
    /// The egress interface's driver on Linux (`IFLA_INFO_KIND`: "wireguard", "tun", "veth", "gre", "bridge"), `nil`
    /// for a physical device, on other platforms, and when the target is not reachable.
    public var interfaceDriver: String?
    /// The route that serves the target, as `ip route get` shows it (Linux only); `nil` when not reachable.
    public var route: Route?

    /// Whether the path leaves through a VPN interface (``interfaceKind`` is ``InterfaceKind/vpn``).
    public var isVPN: Bool { interfaceKind == .vpn }
    /// Whether an IPv4 route to the target exists over a running interface.
    public var supportsIPv4: Bool
    /// Whether an IPv6 route to the target exists over a running interface.
    public var supportsIPv6: Bool

    /// Creates a path snapshot.
    /// - Parameters:
    ///   - status: the reachability status.
    ///   - interfaceName: the egress interface's name, `nil` when not reachable.
    ///   - interfaceType: the egress interface's kind, `nil` when not reachable.
    ///   - isExpensive: whether the path is cellular or a hotspot.
    ///   - supportsIPv4: whether the target is reachable over IPv4.
    ///   - supportsIPv6: whether the target is reachable over IPv6.
    ///   - isConstrained: whether the path is constrained (Low Data Mode).
    ///   - interfaceKind: what the egress interface is; by default the kind of `interfaceType`.
    ///   - interfaceDriver: the egress interface's driver (`IFLA_INFO_KIND`).
    ///   - route: the route that serves the target.
    public init(
        status: NetworkReachabilityStatus,
        interfaceName: String? = nil,
        interfaceType: InterfaceType? = nil,
        isExpensive: Bool = false,
        supportsIPv4: Bool = false,
        supportsIPv6: Bool = false,
        isConstrained: Bool = false,
        interfaceKind: InterfaceKind? = nil,
        interfaceDriver: String? = nil,
        route: Route? = nil
    ) {
        self.status = status
        self.interfaceName = interfaceName
        self.interfaceType = interfaceType
        self.isExpensive = isExpensive
        self.supportsIPv4 = supportsIPv4
        self.supportsIPv6 = supportsIPv6
        self.isConstrained = isConstrained
        self.interfaceKind = interfaceKind ?? interfaceType.map(InterfaceKind.init)
        self.interfaceDriver = interfaceDriver
        self.route = route
    }
}

extension NetworkPath {
    /// A reachable path over a link of the given type, with the status AFNetworking's rules give it.
    static func reachable(
        via link: RoutingState.Link,
        type: InterfaceType,
        route: Route?,
        supportsIPv4: Bool,
        supportsIPv6: Bool
    ) -> NetworkPath {
        NetworkPath(
            status: type.reachableStatus,
            interfaceName: link.name,
            interfaceType: type,
            isExpensive: type == .cellular,
            supportsIPv4: supportsIPv4,
            supportsIPv6: supportsIPv6,
            interfaceKind: InterfaceClassifier.kind(of: link, type: type),
            interfaceDriver: link.driver,
            route: route
        )
    }

    /// The path with `.reachableViaEthernet` reported as `.reachableViaWiFi` (AFNetworking on macOS).
    func reportingEthernetAsWiFi() -> NetworkPath {
        var path = self
        if path.status == .reachableViaEthernet {
            path.status = .reachableViaWiFi
        }
        return path
    }
}

extension NetworkPath.InterfaceType {
    /// The status a reachable path over this kind of interface has: loopback and other interfaces count as WiFi,
    /// AFNetworking's catch-all.
    var reachableStatus: NetworkReachabilityStatus {
        switch self {
        case .cellular: .reachableViaWWAN
        case .wiredEthernet: .reachableViaEthernet
        case .wifi, .loopback, .other: .reachableViaWiFi
        }
    }
}
