import Foundation

/// One deployment's measurements, in order: a warm-up, the throughput rounds (through the servers and straight on
/// the stores, interleaved, the order flipped every round), `list` apart, then the push latency.
enum NotesBench {
    /// Measures each of `kinds` in turn.
    static func measure(
        _ kinds: [NotesDeployment.Kind],
        options: NotesBenchOptions,
        postgres: ThrowawayPostgres?
    ) async throws -> NotesReport {
        var report = NotesReport()
        for kind in kinds {
            try await measure(kind, options: options, postgres: postgres, report: &report)
        }
        return report
    }

    /// Measures `kind` into `report`.
    static func measure(
        _ kind: NotesDeployment.Kind,
        options: NotesBenchOptions,
        postgres: ThrowawayPostgres?,
        report: inout NotesReport
    ) async throws {
        let postmaster = kind.usesPostgres ? postgres?.postmasterPID : nil
        let deployment = try await NotesDeployment.start(kind, postgresURL: postgres?.url, fsync: !options.noFsync)
        print("\n== \(kind.rawValue): \(deployment.ports.count) server(s) on 127.0.0.1 port(s) \(deployment.ports)")
        do {
            let warmServer = try await ThroughputRun.throughServers(
                deployment,
                clients: 10,
                duration: 1,
                postmaster: postmaster
            )
            let warmDirect = await ThroughputRun.direct(deployment, workers: 10, duration: 1, postmaster: postmaster)
            print(
                "warm-up: \(Statistics.rate(warmServer.rate)) ops/s through the server(s), "
                    + "\(Statistics.rate(warmDirect.rate)) direct"
            )
            for round in 0..<options.rounds {
                for clients in options.clients {
                    var results = [ThroughputRun.Result](repeating: ThroughputRun.Result(), count: 3)
                    // The variants' order turns every round, so that none always runs first or last.
                    let order = (0..<3).map { (round + $0) % 3 }
                    for variant in order where options.variants.contains(Self.variants[variant]) {
                        if variant == 2 {
                            results[2] = await ThroughputRun.direct(
                                deployment,
                                workers: clients,
                                duration: options.duration,
                                postmaster: postmaster
                            )
                        } else {
                            results[variant] = try await ThroughputRun.throughServers(
                                deployment,
                                clients: clients,
                                duration: options.duration,
                                postmaster: postmaster,
                                accounts: variant == 1
                            )
                        }
                    }
                    let lines = (0..<3).compactMap { variant in
                        options.variants.contains(Self.variants[variant])
                            ? "\(Self.variants[variant]) \(line(results[variant]))" : nil
                    }
                    print("round \(round + 1), \(clients) clients: " + lines.joined(separator: "; "))
                    report.add(kind, clients: clients, server: results[0], accounts: results[1], direct: results[2])
                }
            }
            if options.throughputOnly {
                await deployment.stop()
                return
            }
            let list = try await ListRun.run(deployment, size: options.listSize, rounds: 3, seconds: 1)
            print(
                "list of \(options.listSize): "
                    + "through the server \(list.throughServer.map { Statistics.rate($0) }) per s, "
                    + "direct \(list.direct.map { Statistics.rate($0) }) per s"
            )
            report.lists.append((kind, options.listSize, list))
            let push = try await PushLatencyRun.run(
                deployment,
                warmup: options.pushWarmup,
                changes: options.changes,
                postmaster: postmaster
            )
            print(
                "push: \(push.fromSend.count) changes in \(String(format: "%.1f", push.wall)) s, "
                    + "from send p50 \(Statistics.duration(Statistics.percentile(push.fromSend, 0.5))) "
                    + "p99 \(Statistics.duration(Statistics.percentile(push.fromSend, 0.99))) "
                    + "max \(Statistics.duration(push.fromSend.max() ?? 0)), missing \(push.missing); CPU "
                    + String(format: "%.2f s here, %.2f s PostgreSQL", push.processCPU, push.postgresCPU)
            )
            report.pushes.append((kind, push))
        } catch {
            await deployment.stop()
            throw error
        }
        await deployment.stop()
    }

    /// The throughput variants: through the servers without accounts, through those with accounts (every client logged
    /// in), straight on the stores.
    static let variants = ["server", "accounts", "direct"]

    /// A result on one line: rate, latency, CPU beside wall, errors.
    static func line(_ result: ThroughputRun.Result) -> String {
        var text =
            "\(Statistics.rate(result.rate)) ops/s (\(result.operations) in "
            + String(format: "%.2f s wall; CPU %.2f s here", result.wall, result.processCPU)
        if result.postgresCPU > 0 { text += String(format: " + %.2f s PostgreSQL", result.postgresCPU) }
        text +=
            String(format: " = %.2f cores", (result.processCPU + result.postgresCPU) / max(result.wall, 1e-9))
            + ", op p50 \(Statistics.duration(Statistics.percentile(result.latencies, 0.5)))"
            + " p99 \(Statistics.duration(Statistics.percentile(result.latencies, 0.99))))"
        if result.errors > 0 { text += " \(result.errors) errors, first: \(result.firstError ?? "?")" }
        return text
    }
}
