import Foundation
import Testing

/// reach-watch: its first status on this machine, and real changes inside a network namespace of its own.
@Suite(.timeLimit(.minutes(1)))
struct ReachWatchTests {
    static let statuses = [
        "Unknown", "Not Reachable", "Reachable via WWAN", "Reachable via WiFi", "Reachable via Ethernet",
    ]

    @Test func itPrintsTheCurrentStatusAndExitsAfterCountLines() async throws {
        let run = try Example("reach-watch", ["--count", "1"])
        let (status, stdout, stderr) = try await run.finish()
        #expect(status == 0, "stderr: \(stderr)")
        #expect(stdout.count == 1)
        let line = try #require(stdout.first)
        #expect(Self.statuses.contains { line == $0 || line.hasPrefix($0 + " (") }, "not a status line: \(line)")
    }

    @Test func aBadAddressIsAUsageError() async throws {
        let run = try Example("reach-watch", ["--address", "not-an-address"])
        let (status, stdout, _) = try await run.finish()
        #expect(status == 64)
        #expect(stdout.isEmpty)
    }

    /// In a new network namespace (`unshare -rn`: a user and a network namespace, no root needed) only `lo` exists,
    /// and it is down: localhost has no route. The test brings it up and down from outside with `nsenter`, and the
    /// watcher reports each change.
    @Test func localhostBecomesReachableWhenLoopbackComesUpAndNotWhenItGoesDown() async throws {
        let unshare = try #require(which("unshare"), "this test needs util-linux's unshare and nsenter")
        try #require(try await Self.namespacesWork(unshare: unshare), "network namespaces are not available here")
        let watcher = try Example(
            executable: unshare,
            ["-rn", try Example.path(of: "reach-watch"), "--domain", "localhost", "--count", "3"],
            name: "unshare -rn reach-watch"
        )
        defer { watcher.stop() }
        try await watcher.line("the first status") { $0 == "Not Reachable" }
        try await Self.inNamespace(of: watcher, "ip link set lo up")
        try await watcher.line("reachable over loopback") { $0 == "Reachable via WiFi (lo, loopback)" }
        try await Self.inNamespace(of: watcher, "ip link set lo down")
        try await watcher.line("not reachable again") { $0 == "Not Reachable" }
        let (status, stdout, stderr) = try await watcher.finish()
        #expect(status == 0, "stderr: \(stderr)")
        #expect(stdout == ["Not Reachable", "Reachable via WiFi (lo, loopback)", "Not Reachable"])
    }

    /// Runs `command` inside the network namespace of `process`, and waits for it.
    static func inNamespace(of process: Example, _ command: String) async throws {
        let nsenter = try #require(which("nsenter"), "this test needs util-linux's nsenter")
        let arguments = ["--target", "\(process.processIdentifier)", "--user", "--net", "--preserve-credentials"]
        let run = try Example(
            executable: nsenter,
            arguments + ["/bin/sh", "-c", "PATH=\"$PATH:/usr/sbin:/sbin\"; \(command)"],
            name: "nsenter"
        )
        let (status, _, stderr) = try await run.finish()
        try #require(status == 0, "\(command) failed in the namespace: \(stderr)")
    }

    static func namespacesWork(unshare: String) async throws -> Bool {
        try await Example(executable: unshare, ["-rn", "/bin/true"]).exitStatus() == 0
    }
}
