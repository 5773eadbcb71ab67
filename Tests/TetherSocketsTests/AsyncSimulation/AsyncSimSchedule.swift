import Foundation
import TetherTestSupport

/// A schedule for one `TCPConnection`'s life, drawn from a seed: rounds of operations issued concurrently (each from
/// its own task; a round ends when all of them returned), a stall of the peer in which short reads must time out
/// and a pending read must yield to cancellation, and an ending. Its description is the replay.
struct AsyncSimSchedule: CustomStringConvertible {
    /// A timeout drawn for an operation: none, long (every spelling, the extremes included) or short (zero,
    /// negative, a few milliseconds: the operation may throw a timeout).
    struct Timeout: CustomStringConvertible {
        var duration: Duration?
        var isShort: Bool

        var description: String { duration.map { "\($0.components.seconds)s\($0.components.attoseconds)a" } ?? "nil" }

        static let long: [Duration] = [
            .seconds(120), .seconds(Int64.max),
            Duration(secondsComponent: Int64.max, attosecondsComponent: 999_999_999),
            .seconds(9_300_000_000),
        ]
        static let short: [Duration] = [
            .zero, .seconds(-1), .seconds(Int64.min), .milliseconds(-5), .nanoseconds(1), .milliseconds(2),
            .milliseconds(15),
        ]

        static func draw(using random: inout SeededGenerator) -> Timeout {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3: Timeout(duration: nil, isShort: false)
            case 4...6: Timeout(duration: long.randomElement(using: &random)!, isShort: false)
            default: Timeout(duration: short.randomElement(using: &random)!, isShort: true)
            }
        }
    }

    /// One read.
    enum Read: CustomStringConvertible {
        case length(Int)
        /// Up to and including `separator`, at most `maxLength` bytes.
        case separator([UInt8], maxLength: Int)
        case available(maxLength: Int)
        /// `count` steps of `frames(_:)` with a delimiter codec whose delimiter is the separator (each frame is a
        /// separator read; other reads may come between the steps).
        case frames([UInt8], count: Int)
        /// A bad argument: `.badParam`, nothing consumed (0: negative length, 1: empty separator, 2: a maximum
        /// shorter than the separator, 3: `readAvailable(maxLength: 0)`).
        case bad(Int)

        var description: String {
            switch self {
            case .length(let length): "len(\(length))"
            case .separator(let separator, let max): "sep(\(separator),\(max))"
            case .available(let max): "avail(\(max))"
            case .frames(_, let count): "frames(\(count))"
            case .bad(let kind): "bad(\(kind))"
            }
        }
    }

    /// One operation of a round.
    enum Operation: CustomStringConvertible {
        case read(Read, Timeout, cancelled: Bool)
        /// A write of `size` bytes (a record: header and payload, see ``WriteRecord``).
        case write(size: Int, Timeout, cancelled: Bool)

        var description: String {
            switch self {
            case .read(let read, let timeout, let cancelled): "\(read)@\(timeout)\(cancelled ? "!c" : "")"
            case .write(let size, let timeout, let cancelled): "w\(size)@\(timeout)\(cancelled ? "!c" : "")"
            }
        }
    }

    /// Operations issued together; `pressure`: the peer stops reading meanwhile (writes fill the window).
    struct Round: CustomStringConvertible {
        var operations: [Operation]
        var pressure: Bool

        var description: String {
            (pressure ? "P" : "") + "[" + operations.map(\.description).joined(separator: " ") + "]"
        }
    }

    /// How the life ends, after the stall (every byte the peer sent has been read).
    enum Ending: CustomStringConvertible {
        /// Final writes, then `close()`.
        case close(finalWrite: Int)
        /// `halfClose()`; the peer sees the end, sends `tail` more bytes and closes its side; reads drain them.
        case halfClose(tail: Int)
        /// The peer sends `tail` bytes and half-closes: longer reads throw `.closed`, then the tail drains and
        /// `readAvailable` returns nil; writing goes on.
        case peerHalfClose(tail: Int)
        /// The peer sends `tail` bytes and resets (TLS: closes) the connection.
        case peerReset(tail: Int)
        /// The connection is dropped without `close()`.
        case release

        var description: String {
            switch self {
            case .close(let size): "close(w\(size))"
            case .halfClose(let tail): "halfClose(tail \(tail))"
            case .peerHalfClose(let tail): "peerHalfClose(tail \(tail))"
            case .peerReset(let tail): "peerReset(tail \(tail))"
            case .release: "release"
            }
        }
    }

    let seed: UInt64
    /// Drawn in long mode (its replay needs `TETHER_SIM_LONG=1`).
    let long: Bool
    let stream: SimulatedStream
    let peerSeed: UInt64
    let rounds: [Round]
    let ending: Ending

    /// A schedule of `seed`: 10–60 rounds, or in long mode (``SeededGenerator/isLong``) 1,500–3,000 on one
    /// connection.
    init(seed: UInt64, long: Bool = SeededGenerator.isLong) {
        self.long = long
        var random = SeededGenerator(seed: seed)
        self.seed = seed
        let separatorLength = Int.random(in: 1...2, using: &random)
        stream = SimulatedStream(
            seed: random.next(),
            separator: (0..<separatorLength).map { _ in UInt8.random(in: 0..<SimulatedStream.alphabet, using: &random) }
        )
        peerSeed = random.next()
        let count = long ? Int.random(in: 1_500...3_000, using: &random) : Int.random(in: 10...60, using: &random)
        let pressureRound = random.chance(0.4) ? Int.random(in: 0..<count, using: &random) : -1
        let separator = stream.separator
        rounds = (0..<count).map { index in
            index == pressureRound
                ? Self.pressureRound(using: &random) : Self.round(separator: separator, using: &random)
        }
        let tail = random.chance(0.2) ? 0 : Int.random(in: 1...120_000, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0: ending = .close(finalWrite: Int.random(in: 9...200_000, using: &random))
        case 1: ending = .halfClose(tail: tail)
        case 2: ending = .peerHalfClose(tail: tail)
        case 3: ending = .peerReset(tail: tail)
        default: ending = .release
        }
    }

    private static func round(separator: [UInt8], using random: inout SeededGenerator) -> Round {
        let size = random.chance(0.5) ? 1 : Int.random(in: 2...4, using: &random)
        let operations = (0..<size).map { _ -> Operation in
            let cancelled = random.chance(0.08)
            if random.chance(0.25) {
                let size =
                    random.chance(0.8)
                    ? Int.random(in: 9...2_000, using: &random) : Int.random(in: 9...300_000, using: &random)
                return .write(size: size, Timeout.draw(using: &random), cancelled: cancelled)
            }
            let read: Read
            switch Int.random(in: 0..<20, using: &random) {
            case 0: read = .bad(Int.random(in: 0...3, using: &random))
            case 19: read = .frames(separator, count: Int.random(in: 1...4, using: &random))
            case 1...5:
                read = .available(maxLength: random.chance(0.5) ? 65_536 : Int.random(in: 1...300, using: &random))
            case 6...12:
                read = .length(
                    random.chance(0.1)
                        ? Int.random(in: 1...200_000, using: &random) : Int.random(in: 1...64, using: &random)
                )
            default:
                let max =
                    random.chance(0.1)
                    ? [2, 8].randomElement(using: &random)! : [512, 65_536].randomElement(using: &random)!
                read = .separator(separator, maxLength: max)
            }
            return .read(read, Timeout.draw(using: &random), cancelled: cancelled)
        }
        return Round(operations: operations, pressure: false)
    }

    /// Big writes with short timeouts (a few may be cancelled) while the peer does not read.
    private static func pressureRound(using random: inout SeededGenerator) -> Round {
        let operations = (0..<Int.random(in: 2...4, using: &random)).map { _ -> Operation in
            .write(
                size: Int.random(in: 500_000...2_000_000, using: &random),
                Timeout(duration: .milliseconds(Int.random(in: 5...60, using: &random)), isShort: true),
                cancelled: random.chance(0.3)
            )
        }
        return Round(operations: operations, pressure: true)
    }

    /// The replay and the rounds (a long schedule's first and last 60).
    var description: String {
        let listed = rounds.map(\.description)
        return "\(long ? "TETHER_SIM_LONG=1 " : "")TETHER_SIM_SEED=\(seed): stream(sep \(stream.separator)), "
            + "\(rounds.count) rounds, ends \(ending): "
            + (listed.count > 150
                ? (listed.prefix(60) + ["…"] + listed.suffix(60)).joined(separator: " ")
                : listed.joined(separator: " "))
    }
}
