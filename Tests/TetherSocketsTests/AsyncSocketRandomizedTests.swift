import Foundation
import NIOConcurrencyHelpers
import Testing
import TetherTestSupport

@testable import TetherSockets

/// Runs one drawn schedule against a real run loop and a POSIX peer, synchronously (call it off the cooperative
/// pool), and returns what the checker and the harness found wrong.
struct AsyncSocketSimRun {
    typealias Schedule = AsyncSocketSimSchedule

    let schedule: Schedule
    private let home = RunLoopThread(name: "sim-run-loop")
    private let delegate = AsyncSocketSimDelegate()
    private let socket: AsyncSocket

    init(schedule: Schedule) {
        self.schedule = schedule
        socket = AsyncSocket(delegate: delegate)
        delegate.runLoop = home.runLoop
    }

    private func onRunLoop(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        home.perform {
            body()
            done.signal()
        }
        done.wait()
    }

    /// Waits for the delegate's progress until `condition` holds; false after 10 s.
    private func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = DispatchTime.now() + 10
        while !condition() {
            if delegate.progress.wait(timeout: deadline) == .timedOut { return condition() }
        }
        return true
    }

    private func issue(_ step: Schedule.Step) {
        let (socket, tag) = (self.socket, step.tag)
        switch step.operation {
        case .read(let read, let timeout):
            var buffer: NSMutableData?
            if let spec = read.buffer {
                let made = NSMutableData(data: Data(repeating: 0xEE, count: spec.length))
                delegate.setBuffer(made, tag: tag)
                buffer = made
            }
            switch read {
            case .available(let max, let spec):
                if spec != nil || max > 0 {
                    socket.readData(
                        withTimeout: timeout,
                        buffer: buffer,
                        bufferOffset: spec?.offset ?? 0,
                        maxLength: max,
                        tag: tag
                    )
                } else {
                    socket.readData(withTimeout: timeout, tag: tag)
                }
            case .length(let n, let spec):
                if let spec {
                    socket.readData(
                        toLength: n,
                        withTimeout: timeout,
                        buffer: buffer,
                        bufferOffset: spec.offset,
                        tag: tag
                    )
                } else {
                    socket.readData(toLength: n, withTimeout: timeout, tag: tag)
                }
            case .separator(let sep, let max, let spec):
                if let spec {
                    socket.readData(
                        to: sep,
                        withTimeout: timeout,
                        buffer: buffer,
                        bufferOffset: spec.offset,
                        maxLength: max,
                        tag: tag
                    )
                } else if max > 0 {
                    socket.readData(to: sep, withTimeout: timeout, maxLength: max, tag: tag)
                } else {
                    socket.readData(to: sep, withTimeout: timeout, tag: tag)
                }
            }
        case .write(let count, let timeout):
            let bytes = Data((0..<count).map { Schedule.writeByte(tag: tag, index: $0) })
            socket.write(bytes, withTimeout: timeout, tag: tag)
        case .disconnect: socket.disconnect()
        case .disconnectAfterReading: socket.disconnectAfterReading()
        case .disconnectAfterWriting: socket.disconnectAfterWriting()
        case .disconnectAfterReadingAndWriting: socket.disconnectAfterReadingAndWriting()
        }
    }

    /// Runs the schedule; returns the problems found (empty: it passed).
    func run() throws -> [String] {
        var problems: [String] = []
        let host = privateLoopbackHost()
        let listener = try RawListener(host: host)
        let (socket, port) = (self.socket, listener.port)
        onRunLoop { _ = try? socket.connect(toHost: host, onPort: port, withTimeout: -1) }
        let raw = listener.accept()
        raw.release()
        let delegate = self.delegate
        let peer = AsyncSocketSimPeer(fd: raw.fd, seed: schedule.seed) { delegate.consumed }
        guard waitFor({ delegate.connected }) else { return ["no didConnectToHost"] }
        var lastRead: Int?
        var ended = false
        for step in schedule.steps {
            let body: @Sendable () -> Void = { [self] in issue(step) }
            switch step.site {
            case .otherThread: body()
            case .runLoop: onRunLoop(body)
            case .insideCallback:
                let ran = NIOLockedValueBox(false)
                let wrapped: @Sendable () -> Void = {
                    body()
                    ran.withLockedValue { $0 = true }
                }
                guard let target = lastRead, delegate.runInside(readTag: target, wrapped) else {
                    onRunLoop(body)
                    break
                }
                if !waitFor({ ran.withLockedValue { $0 } || delegate.disconnected }) {
                    problems.append("step #\(step.tag): read #\(target) never completed")
                }
                if let back = delegate.takeBackStep() { onRunLoop(back) }
            }
            if case .read(let read, _) = step.operation, read.isValid, !ended { lastRead = step.tag }
            if step.operation.endsIO { ended = true }
        }
        peer.stop()
        let sent = peer.sent
        peer.end(schedule.ending)
        if schedule.ending == .keepOpen { socket.disconnect() }
        if !waitFor({ delegate.disconnected }) { problems.append("no didDisconnect") }
        // A barrier through the socket's own mailbox: every callback posted before it has run.
        let barrier = DispatchSemaphore(value: 0)
        socket.mailbox.post { barrier.signal() }
        if barrier.wait(timeout: .now() + 10) == .timedOut { problems.append("the mailbox never drained") }
        if !peer.finish() { problems.append("the peer never saw the socket's end of the stream") }
        listener.close()
        home.stop()
        var checker = AsyncSocketSimChecker(
            schedule: schedule,
            issued: schedule.steps,
            sent: sent,
            received: peer.received,
            events: delegate.events
        )
        problems += delegate.violations + checker.check()
        let deadline = Date() + 10
        while socketDescriptors(on: host) != 0 && Date() < deadline { usleep(5000) }
        if socketDescriptors(on: host) != 0 { problems.append("descriptors left open on \(host)") }
        if !problems.isEmpty { problems.append("last events: \(delegate.events.suffix(200))") }
        return problems
    }
}

// Serialized: each case runs four threads of its own per schedule (run loop, driver, the peer's two), and hundreds at
// once (with `TETHER_SIM_SEEDS`) would starve one another rather than test the socket. In long mode
// (`TETHER_SIM_LONG=1`) a case runs ``SeededGenerator/concurrency`` schedules of thousands of steps at once.
@Suite(
    "AsyncSocket (RunLoop era): seeded randomized schedules against a model",
    .serialized,
    .timeLimit(.minutes(SeededGenerator.isLong ? 60 : 10))
)
struct AsyncSocketRandomizedTests {
    @Test(
        "reads get their bytes once, in order; callbacks on the run loop, one at a time; one didDisconnect; no leak",
        arguments: SeededGenerator.batches(SeededGenerator.seeds(first: 0xA5_0C_4E7, count: 16))
    )
    func randomizedSchedules(seeds: [UInt64]) async throws {
        let failures = try await SeededGenerator.simulate(face: "AsyncSocket", seeds: seeds) { seed in
            let schedule = AsyncSocketSimSchedule.draw(seed: seed)
            let problems = try await onThread { try AsyncSocketSimRun(schedule: schedule).run() }
            // Every step is a call the model checks (a read, a write, a disconnect); the connect is one more.
            let failure = problems.isEmpty ? nil : "\(schedule)\n\(problems.prefix(20).joined(separator: "\n"))"
            return (failure, schedule.steps.count + 1)
        }
        #expect(failures.isEmpty, "\(failures.count) schedules failed:\n\(failures.prefix(2).joined(separator: "\n"))")
    }
}
