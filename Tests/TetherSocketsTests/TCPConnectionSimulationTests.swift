import Foundation
import NIOCore
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherSockets

/// `TCPConnection` against a model of its contract, under schedules drawn from seeds: rounds of reads of every kind
/// and writes of every size issued concurrently from several tasks, with timeouts of every spelling (none, long,
/// the `Duration` extremes, zero, negative, a few milliseconds), cancellation, bad arguments, writes that fill the
/// window while the peer does not read; then a stall of the peer and every way a life ends. The invariants: each
/// round's reads are contiguous slices of the stream, valid answers to their kinds, tiling it from where the last
/// round left; a failed read takes nothing; every write arrives once, whole, in the order of its round (all of
/// them when the life ends cleanly); an operation fails only in the ways its arguments allow; nothing hangs; the
/// descriptor is closed at the end, and a connection let go of closes.
///
/// `TETHER_SIM_SEEDS=N` runs N seeds per variant, `TETHER_SIM_SEED=S` replays one; `TETHER_SIM_LONG=1` draws
/// schedules of thousands of rounds on one connection and runs several at once (``SeededGenerator/isLong``).
@Suite(.timeLimit(.minutes(SeededGenerator.isLong ? 60 : 5)))
struct TCPConnectionSimulationTests {
    static let seeds = SeededGenerator.seeds(first: 1, count: 6)

    /// One side of a simulated connection, set up.
    struct Setup {
        /// The simulated connection, held here only until the run takes it (a released one must go away).
        var connection: LockedBox<TCPConnection?>
        var peer: any AsyncSimPeer
        var rawPeer: Bool
        /// The listener's port, and which ends of its connections are this test's.
        var port: Int
        var ends: OpenSockets.Ends
        var cleanup: @Sendable () async throws -> Void
    }

    @Test func randomSchedulesKeepTheContractAsAClient() async throws {
        try await simulate("client") { schedule in
            let listener = try RawListener()
            async let accepted = onThread { listener.accept() }
            let connection = try await TCPConnection.connect(
                host: "127.0.0.1",
                port: Int(listener.port),
                timeout: .seconds(10)
            )
            let raw = try await accepted
            raw.release()
            return Setup(
                connection: LockedBox(connection),
                peer: RawAsyncSimPeer(fd: raw.fd, stream: schedule.stream),
                rawPeer: true,
                port: Int(listener.port),
                ends: .clients,
                cleanup: { listener.close() }
            )
        }
    }

    @Test func randomSchedulesKeepTheContractAsTheAcceptedSide() async throws {
        try await simulate("accepted") { schedule in
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
            let port = listener.localPort
            async let raw = onThread { try RawPeer.connect(port: UInt16(port)) }
            let connection = try #require(try await listener.connections.first { _ in true })
            let peer = try await raw
            peer.release()
            try await listener.close()
            return Setup(
                connection: LockedBox(connection),
                peer: RawAsyncSimPeer(fd: peer.fd, stream: schedule.stream),
                rawPeer: true,
                port: port,
                ends: .accepted,
                cleanup: {}
            )
        }
    }

    @Test func randomSchedulesKeepTheContractOverTLS() async throws {
        let certificates = try await TLSTestCertificates.shared()
        try await simulate("tls") { schedule in
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, tls: try certificates.server())
            let port = listener.localPort
            async let accepted = listener.connections.first { _ in true }
            let client = try await TCPConnection.connect(host: "localhost", port: port, tls: try certificates.client())
            let server = try #require(try await accepted)
            try await listener.close()
            // The seed chooses which side the simulation drives.
            let (simulated, other) = schedule.seed % 2 == 0 ? (client, server) : (server, client)
            return Setup(
                connection: LockedBox(simulated),
                peer: ConnectionAsyncSimPeer(connection: other, stream: schedule.stream),
                rawPeer: false,
                port: port,
                ends: .all,
                cleanup: {}
            )
        }
    }

    /// Runs a schedule of every seed (``SeededGenerator/concurrency`` at a time), prints the count, and expects no
    /// violation; a failure names its seed's replay and its schedule.
    private func simulate(
        _ variant: String,
        setup: @escaping @Sendable (AsyncSimSchedule) async throws -> Setup
    ) async throws {
        let failures = try await SeededGenerator.simulate(face: "TCPConnection(\(variant))", seeds: Self.seeds) {
            seed in
            let schedule = AsyncSimSchedule(seed: seed)
            let (problems, operations) = try await Self.run(schedule, try await setup(schedule))
            let failure =
                problems.isEmpty
                ? nil
                : "\(SeededGenerator.replay(seed)) (\(variant)): \(problems.prefix(5).joined(separator: "; "))\n  "
                    + "schedule: \(String(schedule.description.prefix(2_000)))"
            return (failure, operations)
        }
        #expect(failures.isEmpty, "\(failures.count) schedules failed:\n\(failures.prefix(3).joined(separator: "\n"))")
    }

    /// Runs one schedule; returns its violations and how many operations it issued (the connect, each read, write
    /// and close; a release counts as the close).
    static func run(_ schedule: AsyncSimSchedule, _ setup: Setup) async throws -> ([String], Int) {
        var connection = setup.connection.withLock { connection in
            defer { connection = nil }
            return connection
        }
        weak let weakConnection = connection
        let runner = AsyncSimRunner(schedule: schedule, peer: setup.peer, rawPeer: setup.rawPeer)
        var problems: [String] = []
        var complete = false
        do {
            let sent = try await runner.run(connection!)
            if case .release = schedule.ending {
                connection = nil
                try await setup.peer.receiverEnded()
                let end = setup.peer.record.withLock { $0.end }
                if setup.rawPeer && end != .endOfStream {
                    problems.append("the released connection ended with \(String(describing: end))")
                }
            } else {
                complete = try await runner.end(connection!, sent: sent)
            }
        } catch {
            problems.append("\(error)")
        }
        connection = nil
        try await setup.peer.close()
        let record = setup.peer.record.withLock { $0 }
        problems += runner.model.withLock { model in
            model.checkReceived(record, complete: complete)
            return model.violations
        }
        if case .release = schedule.ending, weakConnection != nil {
            problems.append("the released connection is still alive")
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while OpenSockets.connected(port: setup.port, ends: setup.ends) > 0 {
            guard ContinuousClock.now < deadline else {
                problems.append("a descriptor is still open 10 s after the end")
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await setup.cleanup()
        var released = false
        if case .release = schedule.ending { released = true }
        return (problems, runner.operations.withLock { $0 } + (released ? 2 : 1))
    }
}
