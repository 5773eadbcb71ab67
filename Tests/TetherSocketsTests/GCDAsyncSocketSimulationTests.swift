import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherSockets

/// `GCDAsyncSocket` against a model of its contract, under schedules drawn from seeds: reads of every kind issued
/// from callbacks and other threads with random windows and "no timeout" values of every spelling, writes, a peer
/// that chunks and pauses at random, and every way a life ends. The invariants: every byte the peer sent reaches the
/// read owed it, once, in order; reads and writes complete in issue order; callbacks come on the delegate queue (or
/// the socket's loop), never two at once, none after the one disconnect; a close carries exactly the bytes no read
/// took; a timeout fires no earlier than asked and at most 3 s later; the socket's descriptor is closed at the end.
///
/// `TETHER_SIM_SEEDS=N` runs N seeds per delivery, `TETHER_SIM_SEED=S` replays one (`scripts/simulate.sh`);
/// `TETHER_SIM_LONG=1` draws schedules of thousands of steps and runs several at once (``SeededGenerator/isLong``);
/// `TETHER_SIM_TIMING=1` prints where each schedule's time went.
@Suite struct GCDAsyncSocketSimulationTests {
    static let seeds = SeededGenerator.seeds(first: 1, count: 16)

    @Test(arguments: [GCDAsyncSocket.CallbackDelivery.delegateQueue, .eventLoop])
    func randomSchedulesKeepTheContract(delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        try await Self.simulate(face: "GCDAsyncSocket(\(delivery))", seeds: Self.seeds, tls: false) { schedule in
            try await Self.run(schedule, delivery: delivery)
        }
    }

    /// Runs a schedule of every seed (``SeededGenerator/concurrency`` at a time), reports the count, and expects
    /// no violation; a failure names its seed's replay and its schedule.
    static func simulate(
        face: String,
        seeds: [UInt64],
        tls: Bool,
        _ run: @escaping @Sendable (SocketSchedule) async throws -> ([String], Int)
    ) async throws {
        let results = try await SeededGenerator.run(seeds) { seed in
            let schedule = SocketSchedule(seed: seed, tls: tls)
            let (violations, count) = try await run(schedule)
            let failure =
                violations.isEmpty
                ? nil
                : "\(SeededGenerator.replay(seed)) (\(face)): \(violations.prefix(5).joined(separator: "; "))\n  schedule: "
                    + String(schedule.description.prefix(1_500))
            return (failure, count)
        }
        let failures = results.compactMap(\.0)
        SeededGenerator.report(
            face: face,
            schedules: seeds.count,
            operations: results.map(\.1).reduce(0, +),
            failing: failures.count
        )
        #expect(failures.isEmpty, "\(failures.count) schedules failed:\n\(failures.prefix(3).joined(separator: "\n"))")
    }

    /// Runs one schedule; returns its violations and how many operations it issued (reads, writes, the ending).
    /// A TLS schedule (``SocketSchedule/tls``) needs `tls`: the socket's client settings and the peer's context.
    static func run(
        _ schedule: SocketSchedule,
        delivery: GCDAsyncSocket.CallbackDelivery,
        tls: (client: TLSSettings, server: NIOSSLContext)? = nil
    ) async throws -> ([String], Int) {
        let t0 = ContinuousClock.now
        // A schedule hangs when nothing moves for `quiet`: no read or write completes and the peer neither sends nor
        // receives a byte. A slow one (a busy machine) is not a hang: its time is not bounded, its progress is.
        let quiet: Duration = .seconds(30)
        let listener = try RawListener()
        defer { listener.close() }
        let driver = try start(schedule, delivery: delivery, port: listener.port, tlsSettings: tls?.client)
        weak let weakSocket = driver.holder.withLock { $0 }
        let accepted = try await onThread { listener.accept() }
        accepted.release()
        let peer: any SimulationPeer
        if let tls, let switchAt = schedule.tls {
            peer = try await TLSStreamingPeer(
                fd: accepted.fd,
                stream: schedule.stream,
                plaintextSent: switchAt.plaintextSent,
                plaintextReceived: switchAt.plaintextReceived,
                context: tls.server
            )
        } else {
            peer = StreamingPeer(fd: accepted.fd, stream: schedule.stream)
        }
        var limit: Int?
        if case .peerCloses(let length) = schedule.ending { limit = length }
        peer.start(seed: schedule.peerSeed, limit: limit)
        var problems: [String] = []
        // A schedule that hangs is ended by the test (the peer's close): the peer's view of that end is not the
        // socket's doing.
        var hung = false
        let t1 = ContinuousClock.now
        do {
            switch schedule.ending {
            case .stall(let timeout, _):
                try await Self.wait(for: driver.needsTask, quiet: quiet, driver: driver, peer: peer)
                let sent = try await peer.stopSending()
                if driver.ended.value == nil, let socket = driver.holder.withLock({ $0 }) {
                    driver.issueStallRead(socket, sent: sent, timeout: timeout)
                }
                try await Self.wait(for: driver.ended, quiet: quiet, driver: driver, peer: peer)
            case .release:
                // The steps run on until the last, then the release: a long schedule on a busy machine takes more
                // than `quiet` to get there, which is not a hang while it moves.
                try await Self.wait(for: peer.receiverEnded, quiet: quiet, driver: driver, peer: peer)
            default:
                try await Self.wait(for: driver.ended, quiet: quiet, driver: driver, peer: peer)
            }
        } catch {
            hung = true
            let model = driver.model.withLock { $0 }
            let sent = peer.state.withLock { $0.sent }
            problems.append(
                "the schedule hung (nothing moved for \(quiet)): \(model.completed) of \(model.reads.count) reads and "
                    + "\(model.writesCompleted) of \(model.writes.count) writes done, offset \(model.offset) of the \(sent) "
                    + "bytes the peer sent, current \(String(describing: model.current)); "
                    + (await engineState(driver.holder.withLock { $0 })) + "; " + driver.diagnosis + "; "
                    + (await peer.diagnosis())
            )
        }
        let t2 = ContinuousClock.now
        // Every callback already queued has run: one that comes after the disconnect is on the record.
        if delivery == .delegateQueue { driver.queue.sync {} }
        if let loop = driver.loop { try await loop.submit {}.get() }
        // The peer reads until the socket's side ends (its close), so that everything the socket wrote is counted
        // before the peer's own close would cut the reading short: while bytes still arrive, that is not a hang.
        let peerEnded: Bool
        if hung {
            peerEnded = (try? await peer.receiverEnded.wait(timeout: .seconds(1))) != nil
        } else {
            peerEnded =
                (try? await Self.wait(for: peer.receiverEnded, quiet: .seconds(20), driver: driver, peer: peer)) != nil
        }
        if !peerEnded {
            if !hung { problems.append("the peer never saw the socket's side end (nothing moved for 20 s)") }
            hung = true
        }
        let t3 = ContinuousClock.now
        try await peer.close()
        let t4 = ContinuousClock.now
        problems += driver.violations + check(schedule, driver: driver, peer: peer, hung: hung)
        driver.holder.withLock { $0 = nil }
        try await OpenSockets.waitUntilClosed(port: Int(listener.port), ends: .clients)
        let t5 = ContinuousClock.now
        // `TETHER_SIM_TIMING=1`: where a schedule's time went.
        if ProcessInfo.processInfo.environment["TETHER_SIM_TIMING"] != nil {
            print(
                "timing seed \(schedule.seed) \(schedule.ending): setup \(t1 - t0), steps \(t2 - t1), "
                    + "peer's end \(t3 - t2), peer's close \(t4 - t3), descriptors closed \(t5 - t4)"
            )
        }
        if case .release = schedule.ending, driver.checks.withLock({ $0.endingStarted }) {
            if weakSocket != nil { problems.append("the released socket is still alive") }
            if driver.checks.withLock({ $0.disconnects }) > 0 {
                problems.append("a released socket called its delegate")
            }
        }
        let operations = driver.model.withLock { $0.reads.count + $0.writes.count } + 1
        return (problems, operations)
    }

    private static func start(
        _ schedule: SocketSchedule,
        delivery: GCDAsyncSocket.CallbackDelivery,
        port: UInt16,
        tlsSettings: TLSSettings?
    ) throws -> GCDSimulationDriver {
        let socket = GCDAsyncSocket()
        let driver = GCDSimulationDriver(
            schedule: schedule,
            delivery: delivery,
            socket: socket,
            tlsSettings: tlsSettings
        )
        socket.setDelegate(driver, delegateQueue: driver.queue)
        socket.callbackDelivery = delivery
        try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5)
        // The first reads come from the test's thread, before the connection is up.
        driver.fill(socket)
        return driver
    }

    /// Whether the disconnect came, with no error.
    private static func closedCleanly(_ error: GCDAsyncSocketError??) -> Bool {
        if case .some(.none) = error { return true }
        return false
    }

    /// Waits for `latch` while the schedule moves (a read or write completes, the peer sends or receives); throws
    /// when nothing moved for `quiet`.
    private static func wait<Value>(
        for latch: Latch<Value>,
        quiet: Duration,
        driver: GCDSimulationDriver,
        peer: any SimulationPeer
    ) async throws {
        func progress() -> [Int] {
            let (reads, writes) = driver.model.withLock { ($0.completed, $0.writesCompleted) }
            let (sent, received) = peer.state.withLock { ($0.sent, $0.received) }
            return [reads, writes, sent, received]
        }
        var last = progress()
        while true {
            do {
                _ = try await latch.wait(timeout: quiet)
                return
            } catch {
                let now = progress()
                if now == last { throw error }
                last = now
            }
        }
    }

    /// What the socket's engine holds (read on its loop, bounded): for a schedule that hung.
    static func engineState(_ socket: GCDAsyncSocket?) async -> String {
        guard let socket, let adapter = socket.state.withLock({ $0.adapter }) else { return "no engine" }
        // Sendable: the adapter's engine is read on its event loop only.
        let box = UncheckedSendableBox(adapter)
        let state = adapter.eventLoop.submit { () -> String in
            guard let engine = box.value.engineBox else { return "no engine" }
            let machine = engine.peek { m in
                "phase \(m.phase), TLS \(m.tls), \(m.reads.bufferedBytes) bytes buffered, reads pending "
                    + "\(m.reads.pendingTags.count), deliveries in flight \(m.reads.deliveriesInFlight), input closed "
                    + "\(m.reads.inputClosed), reading paused \(m.isReadingPaused), paused for a timeout query "
                    + "\(m.reads.pausedForTimeoutQuery)"
            }
            let loopState =
                "operations handed over and unfinished \(box.value.hasPendingOperations), processing reads "
                + "\(engine.isProcessingReads), in the read loop \(engine.inReadLoop)"
            let autoRead = try? engine.context?.channel.syncOptions?.getOption(ChannelOptions.autoRead)
            return
                "engine: \(machine), autoRead \(String(describing: autoRead)) (engine's view \(engine.isAutoReading)), "
                + "channel active \(engine.context?.channel.isActive ?? false), TLS handler \(engine.tlsHandler != nil), "
                + loopState
        }
        let latch = Latch<String>()
        state.whenComplete { latch.set((try? $0.get()) ?? "the engine's loop failed") }
        return (try? await latch.wait(timeout: .seconds(5))) ?? "the engine's loop does not answer"
    }

    /// The end's checks: what the peer received, the close's kind, and a timeout's timing. A schedule that `hung`
    /// was ended by the test's closing its peer: how the peer saw that end says nothing of the socket.
    private static func check(
        _ schedule: SocketSchedule,
        driver: GCDSimulationDriver,
        peer: any SimulationPeer,
        hung: Bool
    ) -> [String] {
        var problems: [String] = []
        let model = driver.model.withLock { $0 }
        let checks = driver.checks.withLock { $0 }
        let received = peer.state.withLock { $0 }
        if let wrong = received.firstWrongByte { problems.append("the peer received a wrong byte at \(wrong)") }
        // A reset (the socket closed with bytes it never read, or the peer's bytes reached it once closed) may lose
        // what was still in flight; a FIN (over TLS: the socket's close_notify) may not.
        let orderly = received.endErrno == 0
        // A TLS close sends close_notify behind the bytes the channel has not written yet, then waits up to 5 s (NIOSSL's
        // shutdown timeout) for the peer's; when the wait runs out, the channel closes and drops what it still held,
        // close_notify included: a stream cut short ends without it (a FIN, so every byte reported written arrives).
        // That is allowed only where the close may drop queued bytes, and did.
        var afterWriting = false
        if case .disconnectAfterWriting = schedule.ending { afterWriting = true }
        let cutShort =
            !afterWriting && received.received < model.writtenBytes && received.received >= model.completedWriteBytes
        if received.endErrno == StreamingPeer.State.raggedEnd && !hung && !cutShort {
            // How and when (after the socket's disconnect callback) the peer saw the end.
            var after = "no time"
            if let end = received.endedAt, let closed = checks.closedAt {
                after = "\(end - closed) after the disconnect"
            }
            problems.append(
                "the socket's TLS stream ended without close_notify, and not by a reset (the peer saw "
                    + "\(received.endNote), \(after), having received \(received.received) bytes; "
                    + "\(model.completedWriteBytes) reported written of \(model.writtenBytes) queued)"
            )
        }
        if (orderly && received.received < model.completedWriteBytes) || received.received > model.writtenBytes {
            problems.append(
                "the peer received \(received.received) bytes; \(model.completedWriteBytes) were reported written of "
                    + "\(model.writtenBytes) queued"
            )
        }
        // A separator read that ran past its maximum ends the life early; the model checked that it was owed.
        if checks.closeError??.code == .readMaxedOut { return problems }
        switch schedule.ending {
        case .disconnectAfterWriting:
            // Every byte arrives before the orderly close; a reset (the socket closed with bytes unread, as the
            // original's close(2) does) may lose the last ones in flight.
            if (received.endErrno == 0 && received.received != model.writtenBytes) || model.pendingWrites != 0 {
                problems.append("after writing: \(received.received) of \(model.writtenBytes) bytes arrived")
            }
            if !Self.closedCleanly(checks.closeError) {
                problems.append("after writing: closed with \(String(describing: checks.closeError))")
            }
        case .disconnectAfterReading:
            if model.pendingReads != 0 { problems.append("after reading: \(model.pendingReads) reads never completed") }
            if !Self.closedCleanly(checks.closeError) {
                problems.append("after reading: closed with \(String(describing: checks.closeError))")
            }
        case .disconnect:
            if !Self.closedCleanly(checks.closeError) {
                problems.append("disconnect: closed with \(String(describing: checks.closeError))")
            }
        case .peerCloses:
            if checks.closeError??.code != .closed && checks.closeError??.code != .readMaxedOut {
                problems.append("the peer's close ended the life with \(String(describing: checks.closeError))")
            }
        case .stall(let timeout, let granted):
            guard checks.closeError??.code == .readTimeout || checks.closeError??.code == .readMaxedOut else {
                problems.append("the stall ended with \(String(describing: checks.closeError))")
                break
            }
            if checks.closeError??.code == .readTimeout, let issued = checks.stallIssued, let closed = checks.closedAt {
                let extra = granted > 0 && granted.isFinite ? granted : 0
                let elapsed =
                    Double((closed - issued).components.attoseconds) / 1e18
                    + Double((closed - issued).components.seconds)
                if elapsed < timeout + extra || elapsed > timeout + extra + 3 {
                    problems.append("a timeout of \(timeout) s (+\(extra) s granted) fired after \(elapsed) s")
                }
            }
        case .release:
            break
        }
        return problems
    }
}
