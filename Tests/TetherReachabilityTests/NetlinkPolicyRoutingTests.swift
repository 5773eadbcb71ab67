#if os(Linux)
import Foundation
import Testing
import TetherTestSupport

/// The route the kernel would use decides, checked against `ip route get` in a network namespace made for the test:
/// blocking default routes, policy rules, VPN devices, and waiting for connectivity.
@Suite(.serialized)
struct NetlinkPolicyRoutingTests {
    static let vethPair = NetlinkPathMonitorTests.vethPair
    /// A second veth pair: trv2 (10.78.0.1/24, 2001:db8:78::1/64) up with its peer trv3.
    static let secondVethPair = """
        ip link add trv2 type veth peer name trv3
        ip link set trv3 up
        ip link set trv2 up
        ip addr add 10.78.0.1/24 dev trv2
        ip -6 addr add 2001:db8:78::1/64 dev trv2 nodad
        """
    static let ipv6OnTrv0 = "ip -6 addr add 2001:db8:77::1/64 dev trv0 nodad"

    static func isChange(_ status: String, interface: String? = nil) -> (NamespaceProbe.Line) -> Bool {
        NetlinkPathMonitorTests.isChange(status, interface: interface)
    }

    /// `ip route get` for the family's probe destination, in the namespace.
    static func routeGet(_ family: String) -> String {
        family == "ipv4" ? "ip route get 8.8.8.8" : "ip -6 route get 2001:4860:4860::8888"
    }

    /// `default via …` at metric 100, then `<kind> default metric 1`: `ip route get` no longer leaves through trv0,
    /// and neither does the zero-address manager (it said "Reachable via Ethernet": only unicast defaults counted).
    /// Deleting the blocking route makes both reachable again.
    @Test(arguments: ["unreachable", "blackhole", "prohibit"], ["ipv4", "ipv6"])
    func aBlockingDefaultRouteWithALowerMetricIsNotReachableAsIPRouteGetSays(kind: String, family: String) throws {
        let ip = family == "ipv4" ? "ip" : "ip -6"
        let gateway = family == "ipv4" ? "10.77.0.2" : "2001:db8:77::2"
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\n" + Self.ipv6OnTrv0
                + "\n\(ip) route add default via \(gateway) dev trv0 metric 100",
            arguments: []
        )
        defer { probe.close() }
        let started = try probe.next("the synchronous first status") { $0.event == "started" }
        #expect(started.status == "Reachable via Ethernet")
        #expect(started.interface == "trv0")
        #expect(try probe.output(of: Self.routeGet(family)).contains("dev trv0"))

        try probe.run("\(ip) route add \(kind) default metric 1")
        try probe.next("not reachable behind the \(kind) route", where: Self.isChange("Not Reachable"))
        let kernel = try probe.output(of: Self.routeGet(family))
        #expect(!kernel.contains("dev trv0"), "ip route get still leaves through trv0: \(kernel)")

        try probe.run("\(ip) route del \(kind) default metric 1")
        try probe.next("reachable without it", where: Self.isChange("Reachable via Ethernet", interface: "trv0"))
        #expect(try probe.output(of: Self.routeGet(family)).contains("dev trv0"))
    }

    /// A manager started behind a blocking default route reports it at once: its first status comes from the
    /// current routing state, never `Unknown`.
    @Test func aManagerStartedBehindABlockingDefaultRouteIsNotReachableFromItsFirstStatus() throws {
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\nip route add default via 10.77.0.2 dev trv0 metric 100\n"
                + "ip route add unreachable default metric 1",
            arguments: []
        )
        defer { probe.close() }
        let started = try probe.next("the synchronous first status") { $0.event == "started" }
        #expect(started.status == "Not Reachable")
        #expect(try probe.output(of: Self.routeGet("ipv4")).contains("No route to host"))
    }

    /// `ip rule add to HOST lookup 100` with a default route through trv2 in table 100: the host's manager follows
    /// the rule to trv2, as `ip route get HOST` does, and returns to trv0 when the rule goes.
    @Test(arguments: ["ipv4", "ipv6"])
    func aPolicyRuleThatSendsOneHostThroughAnotherInterfaceIsSeenForThatHost(family: String) throws {
        let isIPv4 = family == "ipv4"
        let ip = isIPv4 ? "ip" : "ip -6"
        let host = isIPv4 ? "192.0.2.1" : "2001:db8:99::1"
        let setup = [
            Self.vethPair, Self.ipv6OnTrv0, Self.secondVethPair,
            "\(ip) route add default via \(isIPv4 ? "10.77.0.2" : "2001:db8:77::2") dev trv0",
        ]
        let probe = try NamespaceProbe(setup: setup.joined(separator: "\n"), arguments: ["--address", host])
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.interface == "trv0")

        let gateway = isIPv4 ? "10.78.0.2" : "2001:db8:78::2"
        try probe.run(
            "\(ip) route add default via \(gateway) dev trv2 table 100\n\(ip) rule add to \(host) lookup 100 priority 1000"
        )
        let ruled = try probe.next(
            "the host through trv2",
            where: Self.isChange("Reachable via Ethernet", interface: "trv2")
        )
        #expect(ruled.route == "default via \(gateway) table 100 metric \(isIPv4 ? 0 : 1024) rule 1000")
        #expect(try probe.output(of: "\(ip) route get \(host)").contains("dev trv2"))

        try probe.run("\(ip) rule del priority 1000")
        try probe.next("the host back through trv0", where: Self.isChange("Reachable via Ethernet", interface: "trv0"))
        #expect(try probe.output(of: "\(ip) route get \(host)").contains("dev trv0"))
    }

    /// A `tun` device (as OpenVPN, Tailscale and other userspace VPNs use) carrying the default route is a VPN:
    /// AFNetworking's status stays "Reachable via WiFi" (its catch-all), the kind says `vpn`, the driver `tun`.
    /// (WireGuard devices need the `wireguard` kernel module, which user namespaces cannot load; its links are
    /// classified by the same rule, see `InterfaceClassifierTests`.)
    @Test func aTunDeviceCarryingTheDefaultRouteIsReportedAsAVPN() throws {
        try SystemRequirementsForTun.check()
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\nip route add default via 10.77.0.2 dev trv0 metric 100",
            arguments: ["--hold-tun", "tun0"]
        )
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.interface == "trv0")
        #expect(started.kind == "wiredEthernet")

        try probe.run(
            "ip link set tun0 up\nip addr add 10.99.0.1 peer 10.99.0.2 dev tun0\nip route add default dev tun0 metric 10"
        )
        let vpn = try probe.next(
            "the default route through tun0",
            where: Self.isChange("Reachable via WiFi", interface: "tun0")
        )
        #expect(vpn.kind == "vpn")
        #expect(vpn.driver == "tun")
        #expect(vpn.interfaceType == "other")
        #expect(try probe.output(of: "ip route get 8.8.8.8").contains("dev tun0"))

        try probe.run("ip route del default dev tun0 metric 10")
        try probe.next("back on trv0", where: Self.isChange("Reachable via Ethernet", interface: "trv0"))
    }

    /// wg-quick's policy routing over a tunnel device: `lookup main suppress_prefixlength 0` and
    /// `not fwmark 51820 lookup 51820`, the tunnel's default route in table 51820 and the main table's default route
    /// left in place. The kernel sends unmarked traffic through the tunnel; so does the zero-address manager.
    @Test func wgQuickStylePolicyRoutingThroughATunnelIsAVPN() throws {
        try SystemRequirementsForTun.check()
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\nip route add default via 10.77.0.2 dev trv0",
            arguments: ["--hold-tun", "tun0"]
        )
        defer { probe.close() }
        try probe.next("the first status") { $0.event == "started" && $0.interface == "trv0" }
        try probe.run(
            """
            ip link set tun0 up
            ip addr add 10.99.0.1/32 dev tun0
            ip route add default dev tun0 table 51820
            ip rule add not fwmark 51820 table 51820
            ip rule add table main suppress_prefixlength 0
            """
        )
        let vpn = try probe.next(
            "the tunnel's default route",
            where: Self.isChange("Reachable via WiFi", interface: "tun0")
        )
        #expect(vpn.kind == "vpn")
        #expect(try probe.output(of: "ip route get 8.8.8.8").contains("dev tun0"))
        #expect(try probe.output(of: "ip route get 10.77.0.2").contains("dev trv0"))
    }

    /// `waitForConnectivity(timeout:)` returns once a route appears, and throws `connectivityTimedOut` when none
    /// does in time.
    @Test func waitingForConnectivityReturnsWhenARouteAppearsAndTimesOutWhenNoneDoes() throws {
        let probe = try NamespaceProbe(setup: Self.vethPair, arguments: [])
        defer { probe.close() }
        try probe.next("the first status") { $0.event == "started" }
        probe.send("wait 192.0.2.1 60")
        let waiting = try probe.next("the wait's start") { $0.event == "waiting" }
        #expect(waiting.status == "Not Reachable")
        try probe.run(NetlinkPathMonitorTests.defaultRoute)
        let waited = try probe.next("the wait's end") { $0.event == "waited" || $0.event == "waitFailed" }
        #expect(waited.event == "waited", "\(waited)")
        #expect(waited.interface == "trv0")

        try probe.run("ip route add unreachable 192.0.2.9")
        probe.send("wait 192.0.2.9 0.2")
        let failed = try probe.next("the second wait's end") { $0.event == "waited" || $0.event == "waitFailed" }
        #expect(failed.event == "waitFailed")
        #expect(failed.fields["code"] as? Int == 4, "\(failed)")
    }
}

/// The `tun` device the VPN tests create needs `/dev/net/tun`: skipped naming it when missing (a failure under CI,
/// as `SystemRequirements` does).
enum SystemRequirementsForTun {
    static func check() throws {
        guard !FileManager.default.fileExists(atPath: "/dev/net/tun") else { return }
        let reason = "needs /dev/net/tun (the tun driver) for a VPN device; this system has none"
        if SystemRequirements.isRequired { throw NamespaceProbe.Failure(description: reason + " (CI is set)") }
        try Test.cancel(Comment(rawValue: reason))
    }
}
#endif
