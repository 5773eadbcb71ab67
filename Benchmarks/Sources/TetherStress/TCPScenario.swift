import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// The `tcp` and `tls` scenarios: N connections to an echo server in a peer process, each a ping-pong of STX frames
/// (one frame in flight per connection) for a fixed time, every echo checked. Two pairings: (a) a `GCDAsyncSocket`
/// server with `TCPConnection` clients, (b) a `TCPListener` server with `GCDAsyncSocket` clients.
enum TCPScenario {
    /// Which face serves and which face connects.
    struct Pairing {
        var label: String
        var serverFace: String
        var asyncClients: Bool
    }

    static let pairings = [
        Pairing(label: "(a) GCDAsyncSocket server, TCPConnection clients", serverFace: "gcd", asyncClients: true),
        Pairing(label: "(b) TCPListener server, GCDAsyncSocket clients", serverFace: "listener", asyncClients: false),
    ]

    static func run(_ options: StressOptions, tls: Bool) async throws -> Bool {
        let connections = options.int("--connections", default: tls ? 1_000 : 10_000)
        let duration = options.double("--duration", default: 30)
        let batch = options.int("--batch", default: tls ? 100 : 500)
        let choice = options.value("--pairing") ?? "both"
        let chosen = pairings.filter { pairing in
            choice == "both" || (choice == "gcd-server") == (pairing.serverFace == "gcd")
        }
        if chosen.count > 1 {
            // Each pairing in a fresh process of its own: memory freed by the first pairing would otherwise be
            // reused by the second, and the second's memory per connection would read low.
            var passed = true
            for pairing in chosen {
                let name = pairing.serverFace == "gcd" ? "gcd-server" : "listener-server"
                let arguments = [
                    options.command, "--connections", String(connections), "--duration", String(duration), "--batch",
                    String(batch), "--pairing", name,
                ]
                let ok = try runChild(arguments, deadline: duration + 600)
                passed = passed && ok
            }
            return passed
        }
        let material = tls ? try TLSMaterial.generate() : nil
        defer { material?.remove() }
        var passed = true
        for pairing in chosen {
            let ok = try await runPairing(
                pairing,
                connections: connections,
                duration: duration,
                batch: batch,
                material: material
            )
            passed = passed && ok
        }
        return passed
    }

    /// Runs this executable with `arguments`, its output going to ours; true when it exits 0 within `deadline`
    /// seconds (it is killed after that).
    static func runChild(_ arguments: [String], deadline: Double) throws -> Bool {
        let process = Process()
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "/proc/self/exe"
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        try LaunchThread.shared.launch(process)
        let end = Date().addingTimeInterval(deadline)
        while process.isRunning && Date() < end { usleep(50_000) }
        if process.isRunning {
            print("the pairing run did not end within \(Int(deadline)) s: killed")
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { usleep(50_000) }
            return false
        }
        return process.terminationStatus == 0
    }

    static func runPairing(
        _ pairing: Pairing,
        connections count: Int,
        duration: Double,
        batch: Int,
        material: TLSMaterial?
    ) async throws -> Bool {
        let title = material == nil ? "TCP" : "TLS"
        print("\n== \(title) \(pairing.label): \(count) connections, \(duration) s, ping-pong (one frame in flight)")
        let peer = try StressPeer(
            arguments: ["serve-tcp", "--face", pairing.serverFace] + (material?.peerArguments ?? [])
        )
        let tls = material?.clientSettings()
        let control = RunControl()
        let rssBefore = ProcessProbe.residentBytes()
        let peerBefore = peer.residentBytes
        let connectStart = ProcessProbe.now()
        var asyncConnections: [TCPConnection] = []
        var gcdClients: GCDFaceClients?
        let ready: Int
        if pairing.asyncClients {
            asyncConnections = await AsyncFaceClients.connect(
                count: count,
                port: peer.port,
                tls: tls,
                batch: batch,
                control: control
            )
            ready = asyncConnections.count
        } else {
            let clients = GCDFaceClients(count: count, port: peer.port, tls: tls, control: control)
            gcdClients = clients
            ready = await clients.connect(batch: batch)
        }
        let connectSeconds = ProcessProbe.now() - connectStart
        // Let the last handshakes and accepts settle in the peer before reading its memory.
        try await Task.sleep(for: .milliseconds(500))
        let rssAfter = ProcessProbe.residentBytes()
        let peerAfter = peer.residentBytes
        print(
            "connect: \(ready) of \(count) ready in \(String(format: "%.1f", connectSeconds)) s (\(batch) at a time),"
                + " \(control.failedConnects) failed; open descriptors here \(ProcessProbe.openDescriptors())"
        )
        let perClient = Double(rssAfter - rssBefore) / Double(max(ready, 1))
        let perServer = Double(peerAfter - peerBefore) / Double(max(ready, 1))
        print(
            "memory: client \(ProcessProbe.mib(rssBefore)) → \(ProcessProbe.mib(rssAfter)) = "
                + String(format: "%.0f B/connection", perClient)
                + "; server \(ProcessProbe.mib(peerBefore)) → \(ProcessProbe.mib(peerAfter)) = "
                + String(format: "%.0f B/connection", perServer)
        )

        let cpuStart = ProcessProbe.cpuSeconds()
        let peerCPUStart = ProcessProbe.cpuSeconds(pid: peer.pid)
        let start = ProcessProbe.now()
        let finished = NIOLockedValueBox(0)
        if pairing.asyncClients {
            for (index, connection) in asyncConnections.enumerated() {
                Task {
                    await AsyncFaceClients.exchange(id: UInt32(index), connection: connection, control: control)
                    finished.withLockedValue { $0 += 1 }
                }
            }
        } else {
            gcdClients?.start()
        }
        try await Task.sleep(for: .seconds(duration))
        control.stop()
        var drained: Bool
        if let gcdClients {
            drained = await gcdClients.waitForEnd(seconds: 30)
        } else {
            let total = asyncConnections.count
            drained = await GCDFaceClients.wait(seconds: 30) { finished.withLockedValue { $0 } >= total }
            if !drained {
                for connection in asyncConnections { Task { try? await connection.close() } }
                _ = await GCDFaceClients.wait(seconds: 10) { finished.withLockedValue { $0 } >= total }
            }
        }
        let wall = ProcessProbe.now() - start
        let cpuEnd = ProcessProbe.cpuSeconds()
        let peerCPU = ProcessProbe.cpuSeconds(pid: peer.pid) - peerCPUStart
        let closed = await Deadline.run(seconds: 30) { [asyncConnections] in
            await withTaskGroup(of: Void.self) { group in
                for connection in asyncConnections { group.addTask { try? await connection.close() } }
            }
        }
        let stats = peer.stop()
        let totals = control.snapshot
        let received = totals.tally.received
        let clientCPU = (cpuEnd.user - cpuStart.user) + (cpuEnd.system - cpuStart.system)
        print(
            "traffic: \(String(format: "%.1f", wall)) s wall, \(received) frames echoed and checked = "
                + String(format: "%.0f frames/s", Double(received) / wall)
                + (drained ? "" : " (not every connection ended in time: closed by force)")
        )
        print("latency (send → echo, per frame): \(control.histogram.summary())")
        print(
            "CPU over the traffic: client "
                + String(
                    format: "%.1f s (user %.1f, sys %.1f)",
                    clientCPU,
                    cpuEnd.user - cpuStart.user,
                    cpuEnd.system - cpuStart.system
                )
                + String(format: ", server %.1f s", peerCPU)
                + String(
                    format: " = %.2f cores in all, beside %.1f s wall; load average %@",
                    (clientCPU + peerCPU) / wall,
                    wall,
                    ProcessProbe.loadAverage()
                )
                + "; server getrusage over its life: user \(stats["cpu_user"] ?? "?") s, sys \(stats["cpu_sys"] ?? "?") s"
        )
        let serverCorrupted = Int(stats["corrupted"] ?? "0") ?? 0
        let passed =
            totals.clean && totals.errors == 0 && control.failedConnects == 0 && ready == count
            && serverCorrupted == 0 && drained && closed
        print(
            "check: lost \(totals.lost) (unanswered \(totals.unanswered)), duplicated \(totals.tally.duplicated), "
                + "reordered \(totals.tally.reordered), corrupted \(totals.tally.corrupted) (server \(serverCorrupted)), "
                + "errors \(totals.errors), failed connects \(control.failedConnects); server frames \(stats["frames"] ?? "?"), "
                + "accepted \(stats["accepted"] ?? "?") → \(passed ? "PASS" : "FAIL")"
        )
        for error in totals.firstErrors { print("  error: \(error)") }
        return passed
    }
}
