import Foundation
import Testing
import TetherTestSupport

/// Broadcast, multicast (IPv4 and IPv6) and send timeouts on a real multicast-capable interface: a veth pair in a
/// network namespace each test creates (`unshare -rn`), where `TetherUDPProbe` runs both UDP faces. Both ends of the
/// pair are in the one namespace, so v1 must accept packets whose source is v0's (local) address (`accept_local`).
@Suite(.timeLimit(.minutes(1)))
struct UDPNamespaceTests {
    static let network = """
        echo 0 > /proc/sys/net/ipv6/conf/all/accept_dad
        echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad
        ip link set lo up
        ip link add v0 type veth peer name v1
        ip addr add 10.77.0.1/24 dev v0
        ip addr add 10.77.0.2/24 dev v1
        ip link set v0 up
        ip link set v1 up
        ip route add 224.0.0.0/4 dev v0
        for i in all v0 v1; do
          echo 1 > /proc/sys/net/ipv4/conf/$i/accept_local
          echo 0 > /proc/sys/net/ipv4/conf/$i/rp_filter
        done
        """

    /// Runs the probe's `scenario` in a fresh namespace; returns its verdict line.
    func run(_ scenario: String, setup extra: String = "") async throws -> String {
        let probe = try #require(Self.probeExecutable(), "build the probe first (swift build --build-tests)")
        let unshare = try SystemRequirements.tool("unshare", for: "the UDP tests' network namespace")
        try SystemRequirements.tool("ip", for: "the UDP tests' veth pair")
        try SystemRequirements.namespaces("-rn", for: "the UDP tests' network namespace")
        return try await NamespaceProbe.run(
            unshare: unshare,
            setup: "\(Self.network)\n\(extra)",
            probe: probe,
            scenario: scenario
        )
    }

    static func probeExecutable() -> String? {
        BuiltProduct.url(named: "TetherUDPProbe")?.path
    }

    @Test func broadcastBetweenTheFacesOnASubnet() async throws {
        let verdict = try await run("broadcast")
        #expect(verdict.hasPrefix("PASS broadcast: \"hello, subnet\" (delegate → async), \"hello back\""))
    }

    @Test func ipv4MulticastReachesMembersOnAnotherInterfaceUntilTheyLeave() async throws {
        let verdict = try await run("multicast4")
        #expect(verdict.hasPrefix("PASS multicast4:"))
        #expect(verdict.contains("\"to the group\" (delegate member), \"async to the group\" (async member)"))
    }

    @Test func ipv6MulticastIsDeliveredOnAMulticastCapableInterface() async throws {
        let verdict = try await run("multicast6")
        #expect(verdict.hasPrefix("PASS multicast6: \"v6 to the group\" (delegate member), \"v6 to the async member\""))
    }

    @Test func aSendTheKernelCannotTakeTimesOutAloneAndTheSocketStaysOpen() async throws {
        // The qdisc holds what v0 sends (8 kbit/s, 10 MB queue): the sender's buffer fills and the kernel answers
        // EAGAIN. A static neighbour keeps ARP out of it.
        let verdict = try await run(
            "sendtimeout",
            setup: """
                ip neigh add 10.77.0.99 lladdr 02:00:00:00:00:99 dev v0 nud permanent
                tc qdisc add dev v0 root tbf rate 8kbit burst 1600 limit 10000000
                """
        )
        #expect(verdict.hasPrefix("PASS sendtimeout:"))
        #expect(verdict.contains("timed out (sendTimeout), socket open until close()"))
    }

    @Test func theRunLoopFacesSendTimeoutIsCode4AndTheSocketStaysOpen() async throws {
        // As above, through AsyncUdpSocket (its run loop on a thread of the probe's own).
        let verdict = try await run(
            "runloop-sendtimeout",
            setup: """
                ip neigh add 10.77.0.99 lladdr 02:00:00:00:00:99 dev v0 nud permanent
                tc qdisc add dev v0 root tbf rate 8kbit burst 1600 limit 10000000
                """
        )
        #expect(verdict.hasPrefix("PASS runloop-sendtimeout:"))
        #expect(verdict.contains("timed out (code 4), socket open until close()"))
    }
}

/// The send gate's promises on a rate-limited link (128 kbit/s, a static neighbour keeps ARP out of it), checked on
/// the wire with a packet socket on the veth peer.
extension UDPNamespaceTests {
    static let rateLimited = """
        ip neigh add 10.77.0.99 lladdr 02:00:00:00:00:99 dev v0 nud permanent
        tc qdisc add dev v0 root tbf rate 128kbit burst 1600 limit 10000000
        """

    @Test func aSendReportedTimedOutNeverLeaves() async throws {
        let verdict = try await run("timedout-never-leaves", setup: Self.rateLimited)
        #expect(verdict.hasPrefix("PASS timedout-never-leaves:"), "\(verdict)")
    }

    @Test func aCancelledTasksSendWaitingForRoomIsWithdrawnAndNeverLeaves() async throws {
        let verdict = try await run(
            "cancelled-never-leaves",
            setup: """
                ip neigh add 10.77.0.99 lladdr 02:00:00:00:00:99 dev v0 nud permanent
                tc qdisc add dev v0 root tbf rate 1mbit burst 1600 limit 10000000
                """
        )
        #expect(verdict.hasPrefix("PASS cancelled-never-leaves:"), "\(verdict)")
    }

    @Test func aRefusedDatagramThatWaitedFailsAloneAndTheSocketStaysOpen() async throws {
        let verdict = try await run("refused-while-queued", setup: Self.rateLimited)
        #expect(verdict.hasPrefix("PASS refused-while-queued:"), "\(verdict)")
    }
}
