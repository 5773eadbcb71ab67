import NIOCore
import TetherConcurrency
import TetherCore

@testable import TetherSockets

/// Runs one ``AsyncSimSchedule`` on a `TCPConnection` facing an ``AsyncSimPeer``: the rounds, the stall, the
/// ending; every await is bounded. Feeds every outcome to the ``AsyncSimModel``.
final class AsyncSimRunner: Sendable {
    let schedule: AsyncSimSchedule
    let peer: any AsyncSimPeer
    /// Whether the peer is a raw socket (it can reset, and sees a released connection's orderly end).
    let rawPeer: Bool
    let model: LockedBox<AsyncSimModel>
    /// The operations issued on the connection so far (a read, a write, a close each count once).
    let operations = LockedBox(0)

    init(schedule: AsyncSimSchedule, peer: any AsyncSimPeer, rawPeer: Bool) {
        self.schedule = schedule
        self.peer = peer
        self.rawPeer = rawPeer
        model = LockedBox(AsyncSimModel(stream: schedule.stream))
    }

    /// A hang: an operation that did not return within its bound.
    struct Hang: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs the rounds and the stall; returns how many bytes the peer sent (all of them read now). The ending
    /// follows (``end(_:sent:)``, or the caller drops the connection).
    func run(_ connection: TCPConnection) async throws -> Int {
        peer.start(seed: schedule.peerSeed)
        for (index, round) in schedule.rounds.enumerated() {
            if round.pressure { peer.setReceiving(false) }
            operations.withLock { $0 += round.operations.count }
            let outcomes = try await perform(round, index: index, on: connection)
            if round.pressure { peer.setReceiving(true) }
            model.withLock { $0.settle(round.operations, outcomes) }
        }
        return try await stall(connection)
    }

    /// Issues the round's operations, each from its own task; cancels those the schedule cancels.
    private func perform(
        _ round: AsyncSimSchedule.Round,
        index: Int,
        on connection: TCPConnection
    ) async throws -> [AsyncSimOutcome] {
        let results = LockedBox([Int: AsyncSimOutcome]())
        let done = Latch<Void>()
        let count = round.operations.count
        var tasks: [Task<Void, Never>] = []
        for (position, operation) in round.operations.enumerated() {
            var writeID = -1
            if case .write(let size, _, _) = operation {
                writeID = model.withLock { $0.issueWrite(round: index, size: size) }
            }
            let id = writeID
            tasks.append(
                Task {
                    let outcome = await Self.perform(operation, writeID: id, on: connection)
                    let all = results.withLock { results -> Bool in
                        results[position] = outcome
                        return results.count == count
                    }
                    if all { done.set(()) }
                }
            )
        }
        for (position, operation) in round.operations.enumerated() {
            switch operation {
            case .read(_, _, cancelled: true), .write(_, _, cancelled: true):
                // Some are cancelled before they reach the connection, some while they wait there.
                if position % 2 == 1 { await Task.yield() }
                tasks[position].cancel()
            default: break
            }
        }
        do {
            try await done.wait(timeout: .seconds(30))
        } catch {
            // The engine's state, read on its loop (bounded: a blocked loop is part of the report).
            let state = connection.channel.eventLoop.submit {
                let phase = connection.engine.value.peek { "\($0.phase), \($0.reads.bufferedBytes) bytes buffered" }
                return "channel active \(connection.channel.isActive), engine \(phase)"
            }
            let info = (try? await Latch.of(state).wait(timeout: .seconds(5))) ?? "its event loop does not answer"
            throw Hang(
                description: "round \(index) \(round) did not end within 30 s (\(info)): \(results.withLock { $0 })"
            )
        }
        return results.withLock { results in (0..<count).map { results[$0]! } }
    }

    static func perform(
        _ operation: AsyncSimSchedule.Operation,
        writeID: Int,
        on connection: TCPConnection
    ) async
        -> AsyncSimOutcome
    {
        switch operation {
        case .read(let read, let timeout, _):
            return await perform(read, timeout: timeout.duration, on: connection)
        case .write(let size, let timeout, _):
            do {
                try await connection.write(WriteRecord.make(id: writeID, size: size), timeout: timeout.duration)
                return .written
            } catch {
                return AsyncSimOutcome(error: error)
            }
        }
    }

    static func perform(
        _ read: AsyncSimSchedule.Read,
        timeout: Duration?,
        on connection: TCPConnection
    ) async
        -> AsyncSimOutcome
    {
        if case .frames(let separator, let count) = read {
            let codec = DelimiterFrameCodec(
                delimiter: .init(separator),
                maxLength: AsyncSimModel.frameMaximum,
                includesDelimiter: true
            )
            var frames: [[UInt8]] = []
            var iterator = connection.frames(codec, timeout: timeout).makeAsyncIterator()
            do {
                while frames.count < count, let frame = try await iterator.next() {
                    frames.append(Array(frame.readableBytesView))
                }
                return .frames(frames, nil)
            } catch {
                guard case .failed(let failure) = AsyncSimOutcome(error: error) else { return .frames(frames, nil) }
                return .frames(frames, failure)
            }
        }
        do {
            let buffer: ByteBuffer?
            switch read {
            case .length(let length): buffer = try await connection.read(toLength: length, timeout: timeout)
            case .separator(let separator, let max):
                buffer = try await connection.read(upTo: separator, maxLength: max, timeout: timeout)
            case .available(let max): buffer = try await connection.readAvailable(maxLength: max, timeout: timeout)
            case .bad(0): buffer = try await connection.read(toLength: -1, timeout: timeout)
            case .bad(1): buffer = try await connection.read(upTo: [], timeout: timeout)
            case .bad(2): buffer = try await connection.read(upTo: [1, 2, 3], maxLength: 2, timeout: timeout)
            case .bad, .frames: buffer = try await connection.readAvailable(maxLength: 0, timeout: timeout)
            }
            return buffer.map { .bytes(Array($0.readableBytesView)) } ?? .endOfStream
        } catch {
            return AsyncSimOutcome(error: error)
        }
    }

    /// One read whose answer is certain.
    func expect(
        _ read: AsyncSimSchedule.Read,
        timeout: Duration?,
        _ expected: String,
        on connection: TCPConnection
    ) async {
        operations.withLock { $0 += 1 }
        let outcome = await Self.perform(read, timeout: timeout, on: connection)
        model.withLock { $0.settle(read, outcome, expected: expected) }
    }

    /// The peer stops: reads for more than it sent time out (or, pending, yield to cancellation) and take nothing;
    /// a read of exactly what is left takes it all.
    private func stall(_ connection: TCPConnection) async throws -> Int {
        let sent = try await peer.stopSending()
        let left = sent - model.withLock { $0.offset }
        await expect(.length(left + 1), timeout: .milliseconds(10), "timeout", on: connection)
        await expect(.length(left + 1 + Int(schedule.seed % 5_000)), timeout: .zero, "timeout", on: connection)
        await expect(.length(left + 1), timeout: .seconds(-3), "timeout", on: connection)
        operations.withLock { $0 += 1 }
        let pending = Task { await Self.perform(.length(left + 3), timeout: nil, on: connection) }
        // Whether the read reached the connection or not, it cannot complete: cancelled, it throws. The seed decides
        // how far the read gets before the cancel (a number of yields, not a wait for time).
        for _ in 0..<Int(schedule.seed % 3) * 10 { await Task.yield() }
        pending.cancel()
        let cancelled = await pending.value
        model.withLock { $0.settle(.length(left + 3), cancelled, expected: "cancelled") }
        if left > 0 { await expect(.length(left), timeout: .seconds(20), "bytes", on: connection) }
        await expect(.available(maxLength: 100), timeout: .milliseconds(5), "timeout", on: connection)
        await expect(.separator(schedule.stream.separator, maxLength: 10), timeout: .zero, "timeout", on: connection)
        return sent
    }

    /// Reads what is left until `readAvailable` answers `final` ("nil", or "any" for an error or nil).
    func drain(_ connection: TCPConnection, until final: String) async {
        while true {
            operations.withLock { $0 += 1 }
            let outcome = await Self.perform(.available(maxLength: 65_536), timeout: .seconds(20), on: connection)
            switch outcome {
            case .bytes: model.withLock { $0.settle(.available(maxLength: 65_536), outcome, expected: "bytes") }
            case .endOfStream: return
            case .failed(let failure) where final == "any" && failure != .timeout: return
            default:
                model.withLock { $0.violation("draining: readAvailable answered \(outcome)") }
                return
            }
        }
    }

    func write(size: Int, expected: String, on connection: TCPConnection) async {
        operations.withLock { $0 += 1 }
        let id = model.withLock { $0.issueWrite(round: schedule.rounds.count, size: size) }
        let operation = AsyncSimSchedule.Operation.write(
            size: size,
            .init(duration: nil, isShort: false),
            cancelled: false
        )
        let outcome = await Self.perform(operation, writeID: id, on: connection)
        if "\(outcome)" != expected {
            model.withLock { $0.violation("a write of the ending answered \(outcome), expected \(expected)") }
        }
    }
}

extension Latch where Value == String {
    /// A latch set when `future` succeeds.
    static func of(_ future: EventLoopFuture<String>) -> Latch<String> {
        let latch = Latch<String>()
        future.whenSuccess { latch.set($0) }
        return latch
    }
}
