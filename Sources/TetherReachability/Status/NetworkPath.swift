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
        /// Anything else: tunnels, VPNs, PPP without a modem.
        case other
    }

    /// The reachability status of the evaluation.
    public var status: NetworkReachabilityStatus
    /// The egress interface ("eth0", "wlan0", "wwan0"); `nil` when the target is not reachable.
    public var interfaceName: String?
    /// The kind of the egress interface; `nil` when the target is not reachable.
    public var interfaceType: InterfaceType?
    /// Whether the path is expensive: cellular (or, on Apple platforms, a personal hotspot).
    public var isExpensive: Bool
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
    public init(
        status: NetworkReachabilityStatus,
        interfaceName: String? = nil,
        interfaceType: InterfaceType? = nil,
        isExpensive: Bool = false,
        supportsIPv4: Bool = false,
        supportsIPv6: Bool = false
    ) {
        self.status = status
        self.interfaceName = interfaceName
        self.interfaceType = interfaceType
        self.isExpensive = isExpensive
        self.supportsIPv4 = supportsIPv4
        self.supportsIPv6 = supportsIPv6
    }
}

extension NetworkPath {
    /// A reachable path over an interface of the given kind, with the status AFNetworking's rules give it.
    static func reachable(
        via interfaceName: String,
        type: InterfaceType,
        supportsIPv4: Bool,
        supportsIPv6: Bool
    ) -> NetworkPath {
        NetworkPath(
            status: type.reachableStatus,
            interfaceName: interfaceName,
            interfaceType: type,
            isExpensive: type == .cellular,
            supportsIPv4: supportsIPv4,
            supportsIPv6: supportsIPv6
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
