import Dispatch
import TetherNotes

/// Workers running the ``NotesMix`` at once, one task each, for a fixed time: each starts a cycle while the time
/// lasts and always finishes it; the wall time ends when the last worker has.
enum ThroughputRun {
    /// What a run did.
    struct Result {
        /// Operations completed (three per cycle).
        var operations = 0
        /// Seconds from the start to the last worker's end, and the CPU seconds over them.
        var wall = 0.0
        var processCPU = 0.0
        var postgresCPU = 0.0
        /// Every operation's duration in nanoseconds.
        var latencies: [UInt64] = []
        /// Failed cycles, and the first failure.
        var errors = 0
        var firstError: String?

        /// Operations per second of wall time.
        var rate: Double { Double(operations) / max(wall, 1e-9) }
        /// CPU microseconds (this process + PostgreSQL) per operation.
        var cpuPerOperation: Double { (processCPU + postgresCPU) * 1e6 / Double(max(operations, 1)) }
    }

    /// Runs one worker per mix for `duration` seconds.
    static func run(_ mixes: [NotesMix], duration: Double, postmaster: Int32?) async -> Result {
        let start = CPUSample.now(postmaster: postmaster)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(duration * 1e9)
        var result = Result()
        await withTaskGroup(of: Result.self) { group in
            for (worker, mix) in mixes.enumerated() {
                group.addTask {
                    var own = Result()
                    own.latencies.reserveCapacity(4_096)
                    var index = 0
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        let before = own.latencies.count
                        do {
                            try await mix.cycle(worker: worker, index: index, latencies: &own.latencies)
                        } catch {
                            own.errors += 1
                            own.firstError = own.firstError ?? "\(error)"
                            // A failing store or connection: do not spin.
                            try? await Task.sleep(for: .milliseconds(10))
                        }
                        own.operations += own.latencies.count - before
                        index += 1
                    }
                    return own
                }
            }
            for await own in group {
                result.operations += own.operations
                result.latencies += own.latencies
                result.errors += own.errors
                result.firstError = result.firstError ?? own.firstError
            }
        }
        let end = CPUSample.now(postmaster: postmaster)
        result.wall = end.wall - start.wall
        result.processCPU = end.process - start.process
        result.postgresCPU = end.postgres - start.postgres
        return result
    }

    /// `count` clients of the deployment's servers (spread over them in turn), connected before the timed part and
    /// closed after it; with `accounts`, of its servers with accounts, each client logged in with the token.
    static func throughServers(
        _ deployment: NotesDeployment,
        clients count: Int,
        duration: Double,
        postmaster: Int32?,
        accounts: Bool = false
    ) async throws -> Result {
        var clients: [RemoteNoteStore] = []
        let ports = accounts ? deployment.accountPorts : deployment.ports
        let credentials = NotesCredentials.token(user: BenchAccounts.user, deployment.token)
        for index in 0..<count {
            let port = ports[index % ports.count]
            clients.append(
                try await RemoteNoteStore.connect(
                    host: "127.0.0.1",
                    port: port,
                    credentials: accounts ? credentials : nil
                )
            )
        }
        let result = await run(clients.map(NotesMix.remote), duration: duration, postmaster: postmaster)
        for client in clients { await client.close() }
        return result
    }

    /// `count` workers straight on the deployment's stores (spread over them as the clients are over the servers).
    static func direct(
        _ deployment: NotesDeployment,
        workers count: Int,
        duration: Double,
        postmaster: Int32?
    ) async -> Result {
        let mixes = (0..<count).map { NotesMix.direct(deployment.daos[$0 % deployment.daos.count]) }
        return await run(mixes, duration: duration, postmaster: postmaster)
    }
}
