#if os(Linux)
import Foundation
import Testing

/// The Linux back-end end to end: `TetherReachProbe` runs `NetworkReachabilityManager` inside a network namespace
/// made for the test (no traffic leaves the machine), and the test changes that namespace's links and routes.
@Suite(.serialized)
struct NetlinkPathMonitorTests {
    /// A veth pair, both ends up, with 10.77.0.1/24 on trv0 and no default route.
    static let vethPair = """
        ip link add trv0 type veth peer name trv1
        ip link set trv1 up
        ip link set trv0 up
        ip addr add 10.77.0.1/24 dev trv0
        """
    static let defaultRoute = "ip route add default via 10.77.0.2 dev trv0"

    static func isStatus(
        _ status: String,
        manager: String = "main",
        interface: String? = nil
    ) -> (NamespaceProbe.Line) -> Bool {
        { line in
            line.manager == manager && line.status == status && (interface == nil || line.interface == interface)
        }
    }

    static func isChange(
        _ status: String,
        manager: String = "main",
        interface: String? = nil
    ) -> (NamespaceProbe.Line) -> Bool {
        { line in line.event == "change" && isStatus(status, manager: manager, interface: interface)(line) }
    }

    @Test func noRouteIsNotReachableAndADefaultRouteOverAnUpLinkIsReachableViaThatEthernetLink() throws {
        let probe = try NamespaceProbe(setup: Self.vethPair, arguments: [])
        defer { probe.close() }
        try probe.next("the first delivery", where: Self.isChange("Not Reachable"))
        let started = try probe.next("the synchronous first status") { $0.event == "started" }
        #expect(started.status == "Not Reachable")
        #expect(started.interface == nil)
        try probe.run(Self.defaultRoute)
        let reachable = try probe.next(
            "reachable after the default route",
            where: Self.isChange("Reachable via Ethernet")
        )
        #expect(reachable.interface == "trv0")
        #expect(reachable.interfaceType == "wiredEthernet")
    }

    @Test func carrierLossIsNotReachableWithinASecondAndCarrierBackIsReachableAgain() throws {
        let probe = try NamespaceProbe(setup: Self.vethPair + "\n" + Self.defaultRoute, arguments: [])
        defer { probe.close() }
        let started = try probe.next("the synchronous first status") { $0.event == "started" }
        #expect(started.status == "Reachable via Ethernet")
        #expect(started.interface == "trv0")
        // The peer going down takes trv0's carrier: its routes stay, flagged linkdown, and must not count.
        let downAt = Date()
        try probe.run("ip link set trv1 down")
        try probe.next("not reachable after carrier loss", where: Self.isChange("Not Reachable"))
        #expect(Date().timeIntervalSince(downAt) < 1)
        try probe.run("ip link set trv1 up")
        let back = try probe.next("reachable after carrier is back", where: Self.isChange("Reachable via Ethernet"))
        #expect(back.interface == "trv0")
    }

    @Test func anAdministrativelyDownLinkLosesItsRouteUntilItIsAddedBack() throws {
        let probe = try NamespaceProbe(setup: Self.vethPair + "\n" + Self.defaultRoute, arguments: [])
        defer { probe.close() }
        try probe.next("reachable at start", where: Self.isChange("Reachable via Ethernet", interface: "trv0"))
        // The kernel flushes IPv4 routes of a downed link without a message; up again, the route is gone.
        try probe.run("ip link set trv0 down")
        try probe.next("not reachable when down", where: Self.isChange("Not Reachable"))
        try probe.run("ip link set trv0 up\n" + Self.defaultRoute)
        try probe.next(
            "reachable with the route back",
            where: Self.isChange("Reachable via Ethernet", interface: "trv0")
        )
        try probe.run("ip link set trv0 down\nip link set trv0 up")
        try probe.next("not reachable: the route was flushed", where: Self.isChange("Not Reachable"))
    }

    @Test func anAddressManagerReachesAnOnLinkPeerButNotAnUnroutableAddress() throws {
        let peer = try NamespaceProbe(setup: Self.vethPair, arguments: ["--address", "10.77.0.2"])
        defer { peer.close() }
        let reachable = try peer.next("the peer's first status") { $0.event == "started" }
        #expect(reachable.status == "Reachable via Ethernet")
        #expect(reachable.interface == "trv0")

        let unroutable = try NamespaceProbe(setup: Self.vethPair, arguments: ["--address", "192.0.2.1"])
        defer { unroutable.close() }
        let first = try unroutable.next("the unroutable address's first status") { $0.event == "started" }
        #expect(first.status == "Not Reachable")
        try unroutable.run(Self.defaultRoute)
        try unroutable.next(
            "reachable through the default route",
            where: Self.isChange("Reachable via Ethernet", interface: "trv0")
        )
        try unroutable.run("ip route add unreachable 192.0.2.0/24")
        try unroutable.next("an unreachable route blocks it", where: Self.isChange("Not Reachable"))
    }

    @Test func ipv6RoutesCountLikeIPv4Routes() throws {
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\nip -6 addr add 2001:db8:77::1/64 dev trv0 nodad",
            arguments: ["--address", "2001:db8:99::1"]
        )
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.status == "Not Reachable")
        try probe.run("ip -6 route add default via 2001:db8:77::2 dev trv0")
        try probe.next(
            "reachable through the IPv6 default route",
            where: Self.isChange("Reachable via Ethernet", interface: "trv0")
        )
        try probe.run("ip -6 route del default via 2001:db8:77::2 dev trv0")
        try probe.next("not reachable without it", where: Self.isChange("Not Reachable"))
    }

    @Test func aDomainManagerForLocalhostFollowsTheLoopbackLink() throws {
        // A new namespace's loopback is down: localhost has no route until it comes up.
        let probe = try NamespaceProbe(setup: "true", arguments: ["--domain", "localhost"])
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.status == "Not Reachable")
        try probe.run("ip link set lo up")
        let up = try probe.next("reachable over loopback", where: Self.isChange("Reachable via WiFi"))
        #expect(up.interface == "lo")
        #expect(up.interfaceType == "loopback")
        try probe.run("ip link set lo down")
        try probe.next("not reachable without loopback", where: Self.isChange("Not Reachable"))
    }

    @Test func aDomainIsResolvedAgainAfterEachNetworkChange() throws {
        // The probe sees its own /etc/hosts (bind-mounted in its mount namespace); the test rewrites it in place.
        let hosts = FileManager.default.temporaryDirectory.appendingPathComponent("tether-hosts-\(UUID().uuidString)")
        try "10.77.0.2 reach-test.invalid\n".write(to: hosts, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: hosts) }
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\nmount --bind '\(hosts.path)' /etc/hosts",
            arguments: ["--domain", "reach-test.invalid"],
            mountNamespace: true
        )
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.status == "Reachable via Ethernet")
        #expect(started.interface == "trv0")
        let handle = try FileHandle(forWritingTo: hosts)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("192.0.2.1 reach-test.invalid\n".utf8))
        try handle.close()
        // An unrelated change makes the manager resolve the name again.
        try probe.run("ip route add 10.66.0.0/16 via 10.77.0.2 dev trv0")
        try probe.next("not reachable at the new address", where: Self.isChange("Not Reachable"))
    }

    @Test func anUnresolvableDomainIsNotReachable() throws {
        // No route at all: the resolver fails at once instead of waiting for a DNS server.
        let probe = try NamespaceProbe(setup: "true", arguments: ["--domain", "nonexistent.invalid"])
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.status == "Not Reachable")
    }

    @Test func aStoppedManagerDeliversNothingWhileAWitnessSeesChangesAndARestartDeliversAgain() throws {
        let probe = try NamespaceProbe(setup: Self.vethPair + "\n" + Self.defaultRoute, arguments: ["--witness"])
        defer { probe.close() }
        try probe.next("main's first delivery", where: Self.isChange("Reachable via Ethernet", manager: "main"))
        try probe.next("witness's first delivery", where: Self.isChange("Reachable via Ethernet", manager: "witness"))
        _ = probe.takeRemaining()
        probe.send("stop")
        try probe.next("the stop acknowledgement") { $0.event == "stopped" }
        try probe.run("ip link set trv1 down")
        try probe.next("the witness sees carrier loss", where: Self.isChange("Not Reachable", manager: "witness"))
        try probe.run("ip link set trv1 up")
        try probe.next(
            "the witness sees carrier back",
            where: Self.isChange("Reachable via Ethernet", manager: "witness")
        )
        probe.send("sync 1")
        try probe.next("the sync marker") { $0.event == "sync" }
        let all = probe.allLines
        let stoppedIndex = all.firstIndex { $0.event == "stopped" } ?? 0
        let mainChangesAfterStop = all[stoppedIndex...].filter { $0.event == "change" && $0.manager == "main" }
        #expect(mainChangesAfterStop.isEmpty, "main delivered after stopMonitoring: \(mainChangesAfterStop)")
        probe.send("start")
        try probe.next(
            "main's first delivery after the restart",
            where: Self.isChange("Reachable via Ethernet", manager: "main")
        )
    }

    @Test func aBurstOfAThousandRouteChangesIsCoalescedAndEndsInTheRightState() throws {
        let probe = try NamespaceProbe(setup: Self.vethPair, arguments: [])
        defer { probe.close() }
        try probe.next("not reachable at start", where: Self.isChange("Not Reachable"))
        _ = probe.takeRemaining()
        // 999 alternating additions and deletions of the default route (ending with an addition), then one more.
        var batch = (0..<999).map { index in
            (index.isMultiple(of: 2) ? "route add" : "route del") + " default via 10.77.0.2 dev trv0"
        }
        batch.append("route add 10.99.0.0/16 via 10.77.0.2 dev trv0")
        try probe.runBatch(batch)
        try probe.next("reachable after the burst", where: Self.isChange("Reachable via Ethernet", interface: "trv0"))
        // The model behind it is right: carrier loss and return still flip it.
        try probe.run("ip link set trv1 down")
        try probe.next("not reachable after the burst and carrier loss", where: Self.isChange("Not Reachable"))
        try probe.run("ip link set trv1 up")
        try probe.next("reachable again", where: Self.isChange("Reachable via Ethernet", interface: "trv0"))
        probe.send("sync 2")
        try probe.next("the sync marker") { $0.event == "sync" }
        let deliveries = probe.allLines.filter { $0.event == "change" && $0.manager == "main" }
        // 500 default-route flips produced a handful of deliveries at most, not hundreds.
        #expect(deliveries.count <= 12, "not coalesced: \(deliveries.count) deliveries")
        #expect(deliveries.allSatisfy { $0.lastErrorIsNull }, "an overrun or failure was left: \(deliveries)")
    }

    @Test func aSocketThatCannotBeOpenedLeavesUnknownWithLastErrorAndIsRetriedUntilItOpens() throws {
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\n" + Self.defaultRoute,
            arguments: ["--exhaust-descriptors"]
        )
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.status == "Unknown")
        let lastError = started.fields["lastError"] as? String
        #expect(lastError?.contains("backendUnavailable") == true, "lastError: \(String(describing: lastError))")
        // Still alive and answering, with nothing delivered.
        probe.send("sync 1")
        try probe.next("the sync marker") { $0.event == "sync" }
        #expect(!probe.allLines.contains { $0.event == "change" })
        probe.send("restore-descriptors")
        try probe.next("the restore acknowledgement") { $0.event == "restored" }
        // The manager retries every 5 seconds.
        do {
            let recovered = try probe.next(
                "reachable once the socket opens",
                timeout: 15,
                where: Self.isChange("Reachable via Ethernet", interface: "trv0")
            )
            #expect(recovered.lastErrorIsNull)
        } catch {
            probe.send("status")
            let status = try? probe.next("the current status") { $0.event == "status" }
            throw NamespaceProbe.Failure(description: "\(error)\ncurrent status: \(status?.text ?? "none")")
        }
    }

    @Test func theRestoreIsAcknowledgedBeforeTheDeliveryItMadePossible() throws {
        // A retry can open the socket between the restore and its acknowledgement; if its delivery came first, a test
        // waiting for the acknowledgement would pass over it and then wait for a delivery already made. "wait" holds
        // the acknowledgement until the retry has evaluated: the widest such window.
        let probe = try NamespaceProbe(
            setup: Self.vethPair + "\n" + Self.defaultRoute,
            arguments: ["--exhaust-descriptors"]
        )
        defer { probe.close() }
        let started = try probe.next("the first status") { $0.event == "started" }
        #expect(started.status == "Unknown")
        probe.send("restore-descriptors wait")
        let first = try probe.next("the acknowledgement or a delivery", timeout: 25) {
            $0.event == "restored" || $0.event == "change"
        }
        #expect(first.event == "restored", "a delivery overtook the acknowledgement: \(probe.allLines)")
        try probe.next(
            "reachable after the acknowledgement",
            where: Self.isChange("Reachable via Ethernet", interface: "trv0")
        )
    }

    @Test func anOverrunOfTheNetlinkSocketIsRecoveredByAFreshDump() throws {
        let probe = try NamespaceProbe(setup: Self.vethPair, arguments: [])
        defer { probe.close() }
        try probe.next("not reachable at start", where: Self.isChange("Not Reachable"))
        // With the probe stopped, 6,001 route messages overflow its socket (ENOBUFS) and most are lost.
        probe.suspend()
        var batch = (0..<3000).map { "route add 10.88.\($0 / 250).\($0 % 250 + 1)/32 via 10.77.0.2 dev trv0" }
        batch += (0..<3000).map { "route del 10.88.\($0 / 250).\($0 % 250 + 1)/32 via 10.77.0.2 dev trv0" }
        batch.append("route add default via 10.77.0.2 dev trv0")
        do {
            try probe.runBatch(batch)
        } catch {
            probe.resume()
            throw error
        }
        let drops = try probe.netlinkDrops()
        probe.resume()
        #expect(
            (drops ?? 0) > 0,
            "the socket did not overflow (drops: \(String(describing: drops))): nothing was proven"
        )
        try probe.next("reachable after the overrun", where: Self.isChange("Reachable via Ethernet", interface: "trv0"))
        try probe.run("ip link set trv1 down")
        try probe.next("not reachable after carrier loss", where: Self.isChange("Not Reachable"))
        probe.send("sync 3")
        try probe.next("the sync marker") { $0.event == "sync" }
        let deliveries = probe.allLines.filter { $0.event == "change" && $0.manager == "main" }
        #expect(deliveries.allSatisfy { $0.lastErrorIsNull }, "the overrun was reported as a failure: \(deliveries)")
    }
}

extension NamespaceProbe.Line {
    var lastErrorIsNull: Bool { fields["lastError"] is NSNull }
}
#endif
