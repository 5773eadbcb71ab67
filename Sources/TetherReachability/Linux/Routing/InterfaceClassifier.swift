import Foundation

/// Tells the kind of a link from its ARPHRD type and from sysfs (`/sys/class/net/<name>/`).
struct InterfaceClassifier: Sendable {
    /// What sysfs says about a device.
    struct SysfsHints: Sendable, Hashable {
        /// `wireless/` or `phy80211` exists: an 802.11 device.
        var isWireless = false
        /// `DEVTYPE=` from `uevent` ("wlan", "wwan", "bridge", …).
        var deviceType: String?
    }

    /// ARPHRD_* values (`<linux/if_arp.h>`).
    enum HardwareType {
        static let ethernet: UInt16 = 1
        static let ppp: UInt16 = 512
        static let tunnel: UInt16 = 768
        static let tunnel6: UInt16 = 769
        static let sit: UInt16 = 776
        static let ipGRE: UInt16 = 778
        static let ip6GRE: UInt16 = 823
        static let none: UInt16 = 0xFFFE
        static let rawIP: UInt16 = 519
        static let loopback: UInt16 = 772
        static let ieee80211: UInt16 = 801
        static let ieee80211Prism: UInt16 = 802
        static let ieee80211Radiotap: UInt16 = 803
    }

    /// The folder holding one folder per device; a test points it at a fake tree.
    var sysfsRoot: String

    init(sysfsRoot: String = "/sys/class/net") {
        self.sysfsRoot = sysfsRoot
    }

    /// The kind of `link`, from its hardware type and, when sysfs shows this very device, its sysfs hints.
    func classify(_ link: RoutingState.Link) -> NetworkPath.InterfaceType {
        Self.classify(hardwareType: link.hardwareType, isLoopback: link.isLoopback, hints: hints(for: link))
    }

    /// The classification rule: loopback; Wi-Fi (sysfs `wireless/`, `DEVTYPE=wlan`, 802.11 types); cellular
    /// (`DEVTYPE=wwan`, ARPHRD_RAWIP, ARPHRD_PPP); other Ethernet-framed links are wired Ethernet; the rest other.
    static func classify(hardwareType: UInt16, isLoopback: Bool, hints: SysfsHints?) -> NetworkPath.InterfaceType {
        if isLoopback || hardwareType == HardwareType.loopback {
            return .loopback
        }
        if hints?.isWireless == true || hints?.deviceType == "wlan"
            || [HardwareType.ieee80211, HardwareType.ieee80211Prism, HardwareType.ieee80211Radiotap]
                .contains(hardwareType)
        {
            return .wifi
        }
        if hints?.deviceType == "wwan" || hardwareType == HardwareType.rawIP || hardwareType == HardwareType.ppp {
            return .cellular
        }
        if hardwareType == HardwareType.ethernet {
            return .wiredEthernet
        }
        return .other
    }

    /// Drivers (`IFLA_INFO_KIND`) whose links are VPNs: WireGuard, `tun`/`tap` devices, IPsec interfaces, OpenVPN's
    /// data-channel offload.
    static let vpnDrivers: Set<String> = ["wireguard", "tun", "xfrm", "vti", "vti6", "ovpn"]
    /// Drivers whose links are encapsulating tunnels.
    static let tunnelDrivers: Set<String> = [
        "gre", "gretap", "ip6gre", "ip6gretap", "ipip", "sit", "ip6tnl", "vxlan", "geneve", "erspan", "ip6erspan",
        "bareudp",
    ]
    /// Hardware types of tunnels (IP-in-IP, IPv6 tunnels, SIT, GRE).
    static let tunnelHardwareTypes: Set<UInt16> = [
        HardwareType.tunnel, HardwareType.tunnel6, HardwareType.sit, HardwareType.ipGRE, HardwareType.ip6GRE,
    ]

    /// The kind of `link`, whose AFNetworking type is `type`: loopback; a VPN or tunnel driver; a tunnel hardware
    /// type; a point-to-point link without a hardware address (a userspace VPN's device); else the type's kind.
    static func kind(of link: RoutingState.Link, type: NetworkPath.InterfaceType) -> NetworkPath.InterfaceKind {
        if type == .loopback { return .loopback }
        if let driver = link.driver {
            if vpnDrivers.contains(driver) { return .vpn }
            if tunnelDrivers.contains(driver) { return .tunnel }
        }
        if tunnelHardwareTypes.contains(link.hardwareType) { return .tunnel }
        if link.hardwareType == HardwareType.none, link.flags & RoutingState.Link.flagPointToPoint != 0 {
            return .vpn
        }
        return NetworkPath.InterfaceKind(type)
    }

    /// The sysfs hints of `link`, or `nil` when sysfs has no such device or shows another device of that name
    /// (sysfs shows the network namespace it was mounted in, which need not be the process's).
    func hints(for link: RoutingState.Link) -> SysfsHints? {
        guard !link.name.isEmpty, !link.name.contains("/") else { return nil }
        let folder = sysfsRoot + "/" + link.name
        guard let indexText = try? String(contentsOfFile: folder + "/ifindex", encoding: .utf8),
            Int32(indexText.trimmingCharacters(in: .whitespacesAndNewlines)) == link.index
        else { return nil }
        var hints = SysfsHints()
        let fileManager = FileManager.default
        hints.isWireless =
            fileManager.fileExists(atPath: folder + "/wireless") || fileManager.fileExists(atPath: folder + "/phy80211")
        if let uevent = try? String(contentsOfFile: folder + "/uevent", encoding: .utf8) {
            for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
                hints.deviceType = String(line.dropFirst("DEVTYPE=".count))
            }
        }
        return hints
    }
}
