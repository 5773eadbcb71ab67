#if os(Linux)
import Foundation
import Testing
import TetherTestSupport

/// `tether reach` in a network namespace made for each test: what it prints and how it exits.
@Suite(.timeLimit(.minutes(1)))
struct ReachCommandNamespaceTests {
    /// Runs `tether reach <arguments>` inside `unshare -rn` after `setup`.
    static func reach(setup: String, _ arguments: [String]) async throws -> CommandRun {
        let tether = try BuiltProduct.require("tether")
        let unshare = try SystemRequirements.tool("unshare", for: "the reach command's network namespace")
        try SystemRequirements.tool("ip", for: "the reach command's links and routes")
        try SystemRequirements.namespaces("-rn", for: "the reach command's network namespace")
        return try await CommandRun.run(
            URL(fileURLWithPath: unshare),
            ["-rn", "/bin/sh", "-c", "set -e\n\(setup)\nexec \"$0\" reach \"$@\"", tether.path] + arguments,
            environment: NamespaceProbe.environment
        )
    }

    static let reachableSetup =
        NetlinkPathMonitorTests.vethPair + "\nip route add default via 10.77.0.2 dev trv0 metric 100"

    /// The defect as seen from the command line: with `unreachable default metric 1` in front of the usable default
    /// route, `tether reach --once` said "Reachable via Ethernet" while `ip route get 8.8.8.8` said "No route to host".
    @Test func onceBehindAnUnreachableDefaultRouteSaysNotReachableAndExits1() async throws {
        let run = try await Self.reach(
            setup: Self.reachableSetup + "\nip route add unreachable default metric 1",
            ["--once"]
        )
        #expect(run.output == "Not Reachable\n", "\(run.output)\(run.errors)")
        #expect(run.status == 1)
    }

    @Test func onceForAHostShowsTheKindAndTheRouteThatServesIt() async throws {
        let run = try await Self.reach(
            setup: Self.reachableSetup + "\n" + NetlinkPolicyRoutingTests.secondVethPair
                + "\nip route add default via 10.78.0.2 dev trv2 table 100"
                + "\nip rule add to 192.0.2.1 lookup 100 priority 1000",
            ["--host", "192.0.2.1", "--once"]
        )
        #expect(
            run.output
                == "Reachable via Ethernet (trv2, wiredEthernet) route default via 10.78.0.2 table 100 metric 0 rule 1000\n",
            "\(run.errors)"
        )
        #expect(run.status == 0)
    }

    @Test func jsonCarriesTheKindDriverAndRoute() async throws {
        let run = try await Self.reach(setup: Self.reachableSetup, ["--once", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any],
            "\(run.output)\(run.errors)"
        )
        #expect(object["kind"] as? String == "wiredEthernet")
        #expect(object["driver"] as? String == "veth")
        #expect(object["isExpensive"] as? Bool == false)
        #expect(object["route"] as? String == "default via 10.77.0.2 table 254 metric 100 rule 32766")
    }

    @Test func waitReturnsAtOnceWhenReachableAndExits1WithAnErrorOnTimeout() async throws {
        let reachable = try await Self.reach(setup: Self.reachableSetup, ["--wait", "5"])
        #expect(reachable.output == "Reachable via Ethernet (trv0, wiredEthernet)\n", "\(reachable.errors)")
        #expect(reachable.status == 0)

        let blocked = try await Self.reach(
            setup: Self.reachableSetup + "\nip route add blackhole 192.0.2.0/24",
            ["--host", "192.0.2.1", "--wait", "0.2"]
        )
        #expect(blocked.output == "Not Reachable\n")
        #expect(blocked.errors == "error: no route to 192.0.2.1 within 0.2 s\n")
        #expect(blocked.status == 1)
    }

    @Test(arguments: [
        ["--wait", "-1"], ["--wait", "1", "--once"], ["--host", ""], ["--host", "a", "--address", "::1"],
    ])
    func badArgumentsAreRefusedWithUsage(arguments: [String]) async throws {
        let run = try await Self.reach(setup: "true", arguments)
        #expect(run.status == 64, "\(arguments): \(run.errors)")
        #expect(run.errors.contains("Error:"))
    }
}
#endif
