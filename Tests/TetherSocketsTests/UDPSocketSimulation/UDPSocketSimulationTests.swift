import Foundation
import NIOCore
import Testing
import TetherSockets
import TetherTestSupport

/// Seeded randomized schedules against a real ``UDPSocket`` on loopback: bursts of sends (0…9,000 bytes) from
/// concurrent tasks to two real peers and a closed port, some from cancelled tasks, some racing `close()`; a peer
/// sending to it; a consumer of ``UDPSocket/datagrams`` that takes only what the schedule grants; `close()`, or the
/// last reference dropped without it. ``UDPSocketModel`` says what each schedule is owed and checks what happened.
/// `TETHER_SIM_SEED=S` replays one seed, `TETHER_SIM_SEEDS=N` runs N; a failure prints the seed and the schedule.
/// `TETHER_SIM_LONG=1` draws schedules of thousands of operations on one socket and runs several at once in each
/// case (``SeededGenerator/isLong``).
@Suite(.timeLimit(.minutes(SeededGenerator.isLong ? 60 : 2)))
struct UDPSocketSimulationTests {
    @Test(arguments: SeededGenerator.batches(SeededGenerator.seeds(first: 0x5EED_A500, count: 16)))
    func aRandomScheduleKeepsTheAsyncFacesPromises(seeds: [UInt64]) async throws {
        let failures = try await SeededGenerator.simulate(face: "UDPSocket", seeds: seeds) { seed in
            let schedule = UDPSocketSchedule(seed: seed)
            let (problems, operations) = try await Self.run(schedule)
            let failure =
                problems.isEmpty ? nil : "\(problems.prefix(20).joined(separator: "\n"))\n\(schedule)"
            return (failure, operations)
        }
        #expect(failures.isEmpty, "\(failures.count) schedules failed:\n\(failures.prefix(2).joined(separator: "\n"))")
    }

    /// Runs `schedule`; returns what broke (empty: every invariant held) and how many operations ran: each send,
    /// each datagram the socket delivered, each `close()`.
    static func run(_ schedule: UDPSocketSchedule) async throws -> ([String], Int) {
        let collectorA = try await UDPCollectingPeer(host: "127.0.0.1")
        let collectorB = try await UDPCollectingPeer(host: "127.0.0.1")
        var subject: UDPSocket? = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let port = subject!.localPort
        let inodes = OpenSockets.udpInodes(boundTo: [port])
        let consumer = UDPSocketConsumer(subject!)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        // A port nobody listens on, outside the ephemeral range (no concurrently running test can bind it).
        let addresses: [UDPSocketSchedule.Target: SocketAddress] = [
            .peerA: try SocketAddress(ipAddress: "127.0.0.1", port: collectorA.port),
            .peerB: try SocketAddress(ipAddress: "127.0.0.1", port: collectorB.port),
            .closedPort: try SocketAddress(ipAddress: "127.0.0.1", port: 9),
        ]
        var model = UDPSocketModel()
        var problems: [String] = []
        var operations = 0
        if inodes.isEmpty { problems.append("the socket's inode was not found") }
        for op in schedule.ops {
            switch op {
            case .sends(let sends, let closing):
                let results = await send(sends, on: subject!, to: addresses, closing: closing)
                operations += sends.count + (closing ? 1 : 0)
                for (send, result) in results { model.record(send, result, closing: closing) }
                if closing { model.closed() }
            case .peerSends(let first, let sizes):
                // Once closed, the port may belong to another test's socket.
                guard !model.isClosed else { continue }
                for (offset, size) in sizes.enumerated() {
                    model.peerSent(first + offset, size: size)
                    let buffer = ByteBuffer(bytes: UDPSocketSchedule.payload(first + offset, size: size))
                    try await collectorA.socket.send(buffer, to: target)
                }
            case .receive(let count): consumer.grant(count)
            case .drain:
                guard !model.isClosed else { continue }
                problems += await drain(consumer, model, port: port)
            case .close:
                operations += 1
                do { try await subject?.close() } catch { problems.append("close() threw \(error)") }
                model.closed()
            }
        }
        // The end: everything sent to it arrived (or was dropped) while open; then close() or release.
        if !model.isClosed {
            operations += 1
            problems += await drain(consumer, model, port: port)
            if schedule.releaseWithoutClose {
                subject = nil
            } else {
                do { try await subject?.close() } catch { problems.append("close() threw \(error)") }
            }
            model.closed()
        }
        // Nothing after close: the sequence ends, and held nothing but what was sent while open.
        let end = await consumer.waitForEnd()
        operations += consumer.received.count
        if end != .finished { problems.append("datagrams ended with \(end.map { "\($0)" } ?? "nothing")") }
        problems += model.checkReceived(consumer.received, drops: 0, complete: false)
        problems += model.checkSends()
        for (name, collector, peer) in [("A", collectorA, UDPSocketSchedule.Target.peerA), ("B", collectorB, .peerB)] {
            let drops = (try? UDPFloodTests.kernelDrops(port: collector.port)) ?? 0
            let owed = model.owed(to: peer)
            _ = await eventually { UDPSocketModel.compare(owed: owed, got: collector.payloads).missing <= drops }
            problems += model.checkPeer(name, peer, got: collector.payloads, drops: drops)
        }
        // Descriptors: the socket's (and its send gate's duplicate) closed, by inode.
        let released = await eventually { OpenSockets.descriptorInodes().isDisjoint(with: inodes) }
        if !released { problems.append("socket still open: \(OpenSockets.descriptorInodes().intersection(inodes))") }
        await consumer.stop()
        await collectorA.stop()
        await collectorB.stop()
        subject = nil
        return (problems, operations)
    }

    /// Lets the consumer take every datagram owed; waits (bounded) until each arrived or the kernel dropped it, and
    /// checks them.
    private static func drain(_ consumer: UDPSocketConsumer, _ model: UDPSocketModel, port: Int) async -> [String] {
        let owed = model.peerSent.count
        consumer.grant(max(owed - consumer.received.count, 0))
        func drops() -> Int { (try? UDPFloodTests.kernelDrops(port: port)) ?? 0 }
        _ = await eventually { consumer.received.count + drops() >= owed }
        return model.checkReceived(consumer.received, drops: drops(), complete: true, contents: false)
    }

    /// Runs a burst: each task sends its share in order, the tasks concurrently (and a `close()` with them when
    /// `closing`); a cancelled send runs in a task of its own, cancelled at once.
    private static func send(
        _ sends: [UDPSocketSchedule.Send],
        on socket: UDPSocket,
        to addresses: [UDPSocketSchedule.Target: SocketAddress],
        closing: Bool
    ) async -> [(UDPSocketSchedule.Send, UDPSocketModel.Result)] {
        await withTaskGroup(of: [(UDPSocketSchedule.Send, UDPSocketModel.Result)].self) { group in
            for task in Set(sends.map(\.task)) {
                let mine = sends.filter { $0.task == task }
                group.addTask {
                    var results: [(UDPSocketSchedule.Send, UDPSocketModel.Result)] = []
                    for send in mine {
                        let buffer = ByteBuffer(bytes: UDPSocketSchedule.payload(send.sequence, size: send.size))
                        let address = addresses[send.to]!
                        let attempt = Task { try await socket.send(buffer, to: address) }
                        if send.cancelled { attempt.cancel() }
                        switch await attempt.result {
                        case .success: results.append((send, .sent))
                        case .failure(let error): results.append((send, .threw(error)))
                        }
                    }
                    return results
                }
            }
            if closing {
                group.addTask {
                    try? await socket.close()
                    return []
                }
            }
            var all: [(UDPSocketSchedule.Send, UDPSocketModel.Result)] = []
            for await results in group { all += results }
            return all
        }
    }
}
