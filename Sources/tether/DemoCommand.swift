import ArgumentParser
import Foundation

/// `tether demo`: a self-contained tour on 127.0.0.1, one `✓ step` line per capability that works.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a self-contained tour of what works, on loopback."
    )

    @Flag(help: "Keep the temporary files the demo writes.")
    var keepFiles = false

    @Option(
        help: ArgumentHelp(
            "A PostgreSQL database for the notes service's shared-database step (postgres://USER@HOST[:PORT]/DB).",
            discussion: "The step makes a table of its own and drops it at the end. Without it the step is not run.",
            valueName: "url"
        )
    )
    var postgres: String?

    @OptionGroup var common: CommonOptions

    /// The steps, in order; each returns a one-line summary or throws.
    static let steps: [(name: String, run: @Sendable () async throws -> String)] = [
        ("TCP, delegate face: the seed's STX frames, header and body read by tags", DemoSteps.delegateFaceFrames),
        ("TCP, RunLoop face: the seed's AsyncSocket echo client on a run-loop thread", DemoSteps.runLoopEcho),
        ("TCP, async face: echo through TCPListener and TCPConnection", DemoSteps.asyncFaceEcho),
        ("TCP, async face: frames(STXFrameCodec()) as an async sequence", DemoSteps.asyncFaceFrames),
        ("TCP, async listener: an accept flood against a consumer that waits", DemoSteps.listenerBackPressure),
        ("TCP liveness: a heartbeat closes a silent peer", DemoSteps.heartbeatClosesASilentPeer),
        ("TLS: a generated self-signed certificate, trusted by hand", DemoSteps.tlsManualTrust),
        ("TCP through a SOCKS5 proxy with a login, and a wrong password refused", DemoSteps.proxyTunnel),
        ("UDP: a datagram round trip on both faces", DemoSteps.udpRoundTrip),
        ("HTTP: URLConnection GET from an in-process server, then from the cache", { try await runHTTPDemoStep() }),
        ("HTTP: a download cut mid-body, resumed where it stopped", DemoSteps.httpResumedDownload),
        ("Reachability: the current path", { try await runReachabilityDemoStep() }),
        ("Notes: CRUD on every store kind", { try await runNotesDemoStep() }),
        ("Notes service with accounts: changes pushed to their user alone", DemoSteps.notesService),
    ]

    func run() async throws {
        var steps = Self.steps
        let postgresStep = "Notes service on PostgreSQL: two servers, changes pushed across them"
        if let postgres {
            steps.append((postgresStep, { try await DemoSteps.notesServiceOnPostgres(url: postgres) }))
        }
        for step in steps {
            do {
                let summary = try await step.run()
                Terminal.line("✓ \(step.name): \(summary)")
            } catch {
                Terminal.line("✗ \(step.name)")
                Terminal.error("error: \(error)")
                throw ExitCode.failure
            }
        }
        if postgres == nil { Terminal.line("- \(postgresStep): not run (give --postgres URL)") }
    }
}
