import Foundation
import Testing
import TetherTestSupport

/// Keepalive and the heartbeat against a peer that falls silent for real: in a network namespace each test creates
/// (`unshare -rn`), `TetherLivenessProbe` connects one face to an echo server on 127.0.0.1, checks a round trip, then
/// drops every packet the server sends with `iptables` (no FIN, no reset: the peer just stops answering). The face must
/// close by itself, with ETIMEDOUT for keepalive (idle 1 s, interval 1 s, 2 probes) and with the heartbeat's own error
/// for the heartbeat (ping after 200 ms, reply within 500 ms). The probe fails after 30 s of nothing.
@Suite(.timeLimit(.minutes(1)))
struct LivenessNamespaceTests {
    /// Runs the probe's `scenario` in a fresh namespace; returns its verdict line.
    func run(_ scenario: String) async throws -> String {
        let probe = try #require(
            BuiltProduct.url(named: "TetherLivenessProbe")?.path,
            "build the probe first (swift build --build-tests)"
        )
        let unshare = try SystemRequirements.tool("unshare", for: "the liveness tests' network namespace")
        try SystemRequirements.tool("ip", for: "bringing up the namespace's loopback")
        try SystemRequirements.tool("iptables", for: "silencing the peer inside the namespace")
        try SystemRequirements.namespaces("-rn", for: "the liveness tests' network namespace")
        return try await NamespaceProbe.run(
            unshare: unshare,
            setup: "ip link set lo up",
            probe: probe,
            scenario: scenario
        )
    }

    @Test func keepaliveFindsASilentPeerOnTheGCDFace() async throws {
        #expect(try await run("keepalive-gcd") == "PASS keepalive-gcd: closed ETIMEDOUT")
    }

    @Test func keepaliveFindsASilentPeerOnTheRunLoopFace() async throws {
        #expect(try await run("keepalive-runloop") == "PASS keepalive-runloop: closed ETIMEDOUT")
    }

    @Test func keepaliveFindsASilentPeerOnTheAsyncFace() async throws {
        #expect(try await run("keepalive-async") == "PASS keepalive-async: closed ETIMEDOUT")
    }

    @Test func theHeartbeatFindsASilentPeerOnTheGCDFace() async throws {
        #expect(try await run("heartbeat-gcd") == "PASS heartbeat-gcd: closed heartbeatTimeout")
    }

    @Test func theHeartbeatFindsASilentPeerOnTheRunLoopFace() async throws {
        #expect(try await run("heartbeat-runloop") == "PASS heartbeat-runloop: closed heartbeatTimeoutError")
    }

    @Test func theHeartbeatFindsASilentPeerOnTheAsyncFace() async throws {
        #expect(try await run("heartbeat-async") == "PASS heartbeat-async: closed heartbeatTimeout")
    }
}
