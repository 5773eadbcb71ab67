import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// Seeded randomized schedules against a real ``GCDAsyncUdpSocket`` on loopback (with its delegate queue), two real
/// peers (``UDPSocket``s) and a closed port; ``UDPModel`` says what each schedule is owed and checks what happened.
/// `TETHER_SIM_SEED=S` replays one seed, `TETHER_SIM_SEEDS=N` runs N; a failure prints the seed and the schedule.
/// `TETHER_SIM_LONG=1` draws schedules of thousands of operations on one socket and runs several at once in each
/// case (``SeededGenerator/isLong``).
@Suite(.timeLimit(.minutes(SeededGenerator.isLong ? 60 : 2)))
struct UDPSimulationTests {
    @Test(arguments: SeededGenerator.batches(SeededGenerator.seeds(first: 0x5EED_0D90, count: 24)))
    func aRandomScheduleKeepsTheDelegateFacesPromises(seeds: [UInt64]) async throws {
        let failures = try await SeededGenerator.simulate(face: "GCDAsyncUdpSocket", seeds: seeds) { seed in
            let schedule = UDPSchedule(seed: seed)
            let (problems, operations) = try await Self.run(schedule)
            let failure =
                problems.isEmpty ? nil : "\(problems.prefix(20).joined(separator: "\n"))\n\(schedule)"
            return (failure, operations)
        }
        #expect(failures.isEmpty, "\(failures.count) schedules failed:\n\(failures.prefix(2).joined(separator: "\n"))")
    }

    /// Runs `schedule`; returns what broke (empty: every invariant held) and how many operations ran: each send,
    /// receive call, option call and close the socket was given, each datagram the peer sent it, the race's sends
    /// and its end.
    static func run(_ schedule: UDPSchedule) async throws -> ([String], Int) {
        let collectorA = try await UDPCollectingPeer(host: "127.0.0.1")
        let collectorB = try await UDPCollectingPeer(host: "127.0.0.1")
        let (peerA, peerB) = (collectorA.socket, collectorB.socket)
        // A port nobody listens on, outside the ephemeral range (a port freed by closing a socket could be bound by a
        // concurrently running schedule's peer, which would then receive datagrams it was never sent).
        let closedPort = 9
        let recorder = UdpRecorder(label: "udp.sim")
        // The test's only strong reference (the race's release drops it): `socket` reads it for each call.
        let holder = LockedBox<GCDAsyncUdpSocket?>(try Self.boundSocket(recorder))
        var socket: GCDAsyncUdpSocket { holder.withLock { $0! } }
        let port = Int(socket.localPort())
        var model = UDPModel()
        var inodes = Set<String>()
        func noteInodes() {
            if let inode = Self.inode(of: socket) { inodes.insert(inode) }
        }
        noteInodes()
        let addresses: [UDPSchedule.Target: Data] = [
            .peerA: try SocketAddress(ipAddress: "127.0.0.1", port: peerA.localPort).sockaddrData,
            .peerB: try SocketAddress(ipAddress: "127.0.0.1", port: peerB.localPort).sockaddrData,
            .closedPort: try SocketAddress(ipAddress: "127.0.0.1", port: closedPort).sockaddrData,
        ]
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        var operations = 0
        for op in schedule.ops {
            // Once life 1 closed, its port may belong to another test's socket: the peer stops sending to it.
            let firstLifeWasOpen = model.firstLifeOpen
            model.apply(op)
            if case .peerSend = op, !firstLifeWasOpen {} else { operations += 1 }
            switch op {
            case .send(let tag, let size, let to, let timeout, let from):
                let data = UDPSchedule.payload(tag: tag, size: size)
                let address = addresses[to]!
                switch from {
                case .test: socket.send(data, toAddress: address, withTimeout: timeout, tag: tag)
                case .delegateQueue:
                    recorder.queue.sync { socket.send(data, toAddress: address, withTimeout: timeout, tag: tag) }
                case .otherThread:
                    try await onThread { socket.send(data, toAddress: address, withTimeout: timeout, tag: tag) }
                }
            case .peerSend(let sequence, let size):
                guard firstLifeWasOpen else { continue }
                var buffer = ByteBuffer(bytes: UDPSchedule.payload(tag: sequence, size: size))
                buffer.moveReaderIndex(to: 0)
                try await peerA.send(buffer, to: target)
            case .receive(.begin): _ = try? socket.beginReceiving()
            case .receive(.once): _ = try? socket.receiveOnce()
            case .receive(.pause): socket.pauseReceiving()
            case .broadcast(let on): _ = try? socket.enableBroadcast(on)
            case .closeAfterSending:
                socket.closeAfterSending()
                // The life ends once its sends are done; the next operation starts after that (a send racing it is
                // the regression test's).
                let owed = model.closesOwed
                try await recorder.wait { events in events.filter(\.isClose).count >= owed }
            case .close: socket.close()
            }
            noteInodes()
        }
        // Everything owed arrives: send results, then (life 1 still open) every peer datagram, then the close.
        let exactly = model.owedExactlyOne
        try await recorder.waitForSendResults(exactly)
        if model.firstLifeOpen {
            try socket.beginReceiving()
            let owed = model.peerSent.count
            try await recorder.wait { $0.compactMap(\.receivedData).count >= owed }
        }
        // The end: a race of threads sending, and one of them ending the socket (close, closeAfterSending, release).
        let race = schedule.race
        // Once life 1 closed, its port may belong to another test's socket: the peer sends only while it is open.
        let run = try await Self.race(
            race,
            holder: holder,
            addresses: addresses,
            peer: peerA,
            target: model.firstLifeOpen ? target : nil
        )
        for send in run.issued.flatMap({ $0 }) { model.raced(send) }
        operations += run.issued.joined().count + 1
        inodes.formUnion(run.inodes)
        var problems: [String] = []
        if race.end == .release {
            // Nothing of the released socket's is called after it went (callbacks already running may finish).
            await Self.settle()
            recorder.queue.sync {}
            if !run.released() { problems.append("the released socket is still alive") }
        } else {
            model.apply(race.end == .close ? .close : .closeAfterSending)
            let owed = Set((race.end == .closeAfterSending ? run.issued.flatMap { $0 } : run.afterEnd).map(\.tag))
            try await recorder.waitForSendResults(owed)
            // Counted once every owed result came: a send racing `closeAfterSending` may start its life only when
            // the closing one ended.
            model.racedLives(Int(socket.state.withLock { $0.lives } - run.livesBefore))
            noteInodes()
            socket.close()
        }
        let closes = model.closesOwed
        try await recorder.wait { $0.filter(\.isClose).count >= closes }
        await Self.settle()
        recorder.queue.sync {}
        // No callback after the last close, nor any for a released socket's life after its release.
        let afterLastClose = recorder.events.reversed().prefix { !$0.isClose }
        if race.end != .release, let late = afterLastClose.last {
            problems.append("\(afterLastClose.count) callbacks after the last close, first \(late)")
        }
        // What the peers got: each datagram reported sent to them, once and intact, or counted as dropped.
        let sentTo = model.reportedSent(recorder.events)
        let dropsA = (try? UDPFloodTests.kernelDrops(port: peerA.localPort)) ?? 0
        let dropsB = (try? UDPFloodTests.kernelDrops(port: peerB.localPort)) ?? 0
        // Wait until every datagram reported sent arrived (by content: a datagram never reported may arrive too, and
        // the check must see it); bounded, the check below reports what is missing.
        for (collector, target, drops) in [
            (collectorA, UDPSchedule.Target.peerA, dropsA), (collectorB, .peerB, dropsB),
        ] {
            let owed = sentTo[target, default: []].compactMap { tag in
                model.sends[tag].map { UDPSchedule.payload(tag: tag, size: $0.size) }
            }
            _ = await eventually { UDPModel.missing(owed, from: collector.payloads) <= drops }
        }
        let gotA = collectorA.datagrams.map(\.data)
        let gotB = collectorB.datagrams.map(\.data)
        await collectorA.stop()
        await collectorB.stop()
        problems += model.check(recorder.events) + Self.check(race, run, events: recorder.events)
        for (name, target, got, drops) in [("A", UDPSchedule.Target.peerA, gotA, dropsA), ("B", .peerB, gotB, dropsB)] {
            // A released socket owes no callback: a datagram it sent may arrive unreported.
            let unreported = race.end == .release ? Self.unreported(run, to: target, events: recorder.events) : []
            let checked = got.filter { !unreported.contains(Data($0.readableBytesView)) }
            problems += model.checkPeer(name, got: checked, reportedSent: sentTo[target, default: []], drops: drops)
        }
        // Descriptors: every socket of every life is closed (its inode gone from /proc/self/fd).
        let released = await eventually { openSocketInodes().isDisjoint(with: inodes) }
        if !released { problems.append("sockets still open: \(openSocketInodes().intersection(inodes))") }
        return (problems, operations)
    }

    /// A bound socket whose only strong reference the caller keeps.
    private static func boundSocket(_ recorder: UdpRecorder) throws -> GCDAsyncUdpSocket {
        let socket = recorder.makeSocket()
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        return socket
    }

    /// Every loop has run what was queued on it (callbacks on their way to the delegate queue are queued there).
    static func settle() async {
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() { try? await loop.submit {}.get() }
    }

    /// The payloads of the race's sends to `target` that got no result.
    private static func unreported(_ run: UDPRaceRun, to target: UDPSchedule.Target, events: [UdpEvent]) -> Set<Data> {
        let reported = Set(events.compactMap { event -> Int? in if case .sent(let tag) = event { tag } else { nil } })
        return Set(
            run.issued.flatMap { $0 }.filter { $0.to == target && !reported.contains($0.tag) }.map {
                UDPSchedule.payload(tag: $0.tag, size: $0.size)
            }
        )
    }
}

extension UdpEvent {
    var isClose: Bool {
        if case .closed = self { return true }
        return false
    }
}
