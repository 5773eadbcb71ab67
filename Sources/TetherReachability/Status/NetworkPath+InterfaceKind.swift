extension NetworkPath {
    /// What an egress interface is, beyond AFNetworking's kinds: VPNs and tunnels are told apart from the
    /// interfaces they would otherwise be counted as.
    ///
    /// On Linux the kind comes from the link's driver (`IFLA_INFO_KIND`), its hardware type (`ARPHRD_*`), its flags
    /// (`IFF_POINTOPOINT`) and sysfs:
    ///
    /// | kind | links |
    /// |---|---|
    /// | ``vpn`` | `wireguard`, `tun` (also `tap`), `xfrm`, `vti`, `vti6`, `ovpn`; a point-to-point link without a hardware address (`ARPHRD_NONE`) |
    /// | ``tunnel`` | `gre`, `gretap`, `ip6gre`, `ip6gretap`, `ipip`, `sit`, `ip6tnl`, `vxlan`, `geneve`, `erspan`, `ip6erspan`, `bareudp`; `ARPHRD_TUNNEL`, `ARPHRD_TUNNEL6`, `ARPHRD_SIT`, `ARPHRD_IPGRE`, `ARPHRD_IP6GRE` |
    /// | ``loopback``, ``wifi``, ``cellular``, ``wiredEthernet``, ``other`` | as ``NetworkPath/InterfaceType`` (PPP counts as cellular) |
    ///
    /// An IPsec tunnel made of policies alone (no `xfrm` or `vti` interface) is not visible in routing: its packets
    /// leave through the ordinary interface, which is what the path names.
    public struct InterfaceKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The kind's name ("vpn", "tunnel", "wifi", …).
        public let rawValue: String

        /// Creates a kind from its name.
        /// - Parameter rawValue: the kind's name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Creates the kind that an AFNetworking interface type is.
        /// - Parameter type: the interface type.
        public init(_ type: InterfaceType) { self.init(rawValue: type.rawValue) }

        /// A Wi-Fi (802.11) interface.
        public static let wifi = InterfaceKind(.wifi)
        /// A cellular interface: a mobile-broadband modem or a PPP link.
        public static let cellular = InterfaceKind(.cellular)
        /// Wired Ethernet, and any other Ethernet-framed link that is not a VPN or a tunnel (veth, virtio, bridge).
        public static let wiredEthernet = InterfaceKind(.wiredEthernet)
        /// The loopback interface: the target is this host.
        public static let loopback = InterfaceKind(.loopback)
        /// A VPN: WireGuard, a `tun`/`tap` device (OpenVPN, Tailscale, …), an IPsec interface (`xfrm`, `vti`).
        public static let vpn = InterfaceKind(rawValue: "vpn")
        /// An encapsulating tunnel without encryption of its own: GRE, IP-in-IP, SIT, VXLAN, Geneve.
        public static let tunnel = InterfaceKind(rawValue: "tunnel")
        /// Anything else.
        public static let other = InterfaceKind(.other)

        /// The kind's name.
        public var description: String { rawValue }
    }
}
