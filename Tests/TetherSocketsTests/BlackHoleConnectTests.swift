import Foundation
import Testing
import TetherTestSupport

/// A connect to an address whose packets vanish (a "black-hole port"): in a network namespace of its own
/// (`unshare -rn`), 10.9.9.2 is a neighbour on a veth pair with a made-up MAC address that no interface has, so the
/// SYN leaves and is dropped without an answer (no RST, no ICMP). The connect must end with the connect-timeout error,
/// not hang.
@Suite(.timeLimit(.minutes(1)))
struct BlackHoleConnectTests {
    @Test func aConnectIntoABlackHoleTimesOut() async throws {
        let unshare = try SystemRequirements.tool("unshare", for: "a network namespace with a black hole")
        try SystemRequirements.tool("ip", for: "the black hole's veth pair and neighbour")
        try SystemRequirements.namespaces("-rn", for: "a network namespace with a black hole")
        let tether = try BuiltProduct.require("tether")
        let script = """
            ip link add v0 type veth peer name v1 && ip addr add 10.9.9.1/24 dev v0 || exit 3
            ip link set v0 up && ip link set v1 up || exit 3
            ip neigh add 10.9.9.2 lladdr 02:00:00:00:00:02 dev v0 nud permanent || exit 3
            exec "$1" nc --connect-timeout 0.5 10.9.9.2 80
            """
        let run = try await CommandRun.run(
            URL(fileURLWithPath: unshare),
            ["-rn", "/bin/sh", "-c", script, "sh", tether.path]
        )
        #expect(run.status == 1, "\(run.status) \(run.errors)")
        #expect(run.errors.contains("Attempt to connect to host timed out"), "\(run.errors)")
    }

    @Test func aBadConnectTimeoutIsAUsageError() async throws {
        let run = try await CommandRun.run(
            try BuiltProduct.require("tether"),
            ["nc", "--connect-timeout", "0", "127.0.0.1", "9"]
        )
        #expect(run.status == 64)
        #expect(run.errors.contains("--connect-timeout"))
    }
}
