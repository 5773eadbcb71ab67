import Foundation
import TetherTestSupport

/// The randomized `AsyncSocket` test's schedule: the operations a seed draws, where each is called from, and how the
/// peer ends. `description` is the replayable listing a failure prints.
struct AsyncSocketSimSchedule: CustomStringConvertible {
    /// A destination buffer: its length before the read, and the offset the read writes at.
    struct Buffer: CustomStringConvertible {
        var length: Int
        var offset: UInt
        var description: String { "buffer(\(length), at: \(offset))" }
    }

    enum Read: CustomStringConvertible {
        case available(maxLength: UInt, buffer: Buffer?)
        case length(UInt, buffer: Buffer?)
        case separator(Data, maxLength: UInt, buffer: Buffer?)

        var description: String {
            switch self {
            case .available(let max, let buffer): "available(max: \(max)\(buffer.map { ", \($0)" } ?? ""))"
            case .length(let n, let buffer): "length(\(n)\(buffer.map { ", \($0)" } ?? ""))"
            case .separator(let sep, let max, let buffer):
                "separator(\(Array(sep)), max: \(max)\(buffer.map { ", \($0)" } ?? ""))"
            }
        }

        var buffer: Buffer? {
            switch self {
            case .available(_, let buffer), .length(_, let buffer), .separator(_, _, let buffer): buffer
            }
        }

        /// The original's rules for a read that is ignored (no callback, nothing queued).
        var isValid: Bool {
            if let buffer, buffer.offset > UInt(buffer.length) { return false }
            switch self {
            case .available: return true
            case .length(let n, _): return n > 0
            case .separator(let sep, let max, _): return !sep.isEmpty && (max == 0 || max >= UInt(sep.count))
            }
        }
    }

    enum Operation: CustomStringConvertible {
        case read(Read, timeout: TimeInterval)
        case write(count: Int, timeout: TimeInterval)
        case disconnect
        case disconnectAfterReading
        case disconnectAfterWriting
        case disconnectAfterReadingAndWriting

        var description: String {
            switch self {
            case .read(let read, let timeout): "read \(read) timeout \(timeout)"
            case .write(let count, let timeout): "write \(count) timeout \(timeout)"
            case .disconnect: "disconnect"
            case .disconnectAfterReading: "disconnectAfterReading"
            case .disconnectAfterWriting: "disconnectAfterWriting"
            case .disconnectAfterReadingAndWriting: "disconnectAfterReadingAndWriting"
            }
        }

        var endsIO: Bool {
            switch self {
            case .read, .write: false
            default: true
            }
        }
    }

    /// Where a call is made: the driver's own thread, the run loop's thread (outside callbacks), or inside the
    /// `didRead` callback of the last read issued (falling back to the run loop if it completed meanwhile).
    enum Site: String {
        case otherThread, runLoop, insideCallback
    }

    struct Step: CustomStringConvertible {
        var tag: Int
        var operation: Operation
        var site: Site
        var description: String { "#\(tag) \(site.rawValue): \(operation)" }
    }

    enum Ending: String {
        case keepOpen, halfClose, reset
    }

    let seed: UInt64
    /// Drawn in long mode (its replay needs `TETHER_SIM_LONG=1`).
    var long = false
    var steps: [Step] = []
    var ending = Ending.keepOpen

    /// The replay and the listing (a long schedule's first and last 40 steps).
    var description: String {
        let listed = steps.count > 100 ? Array(steps.prefix(40)) + Array(steps.suffix(40)) : steps
        return "\(long ? "TETHER_SIM_LONG=1 " : "")TETHER_SIM_SEED=\(seed): \(steps.count) steps, peer ending "
            + "\(ending.rawValue), steps\(steps.count > 100 ? " (first and last 40)" : ""):\n"
            + listed.map { "  \($0)" }.joined(separator: "\n")
    }

    /// The byte at `index` of the stream the peer sends: letters with a `\n` now and then, every 32-byte block
    /// ending in `\r\n`, so that a separator read always finds its separator within 32 bytes.
    static func streamByte(_ index: Int, seed: UInt64) -> UInt8 {
        switch index % 32 {
        case 30: return 0x0D
        case 31: return 0x0A
        default:
            var mixer = SeededGenerator(seed: seed ^ UInt64(index) &* 0x9E37_79B9)
            let value = mixer.next()
            return value % 9 == 0 ? 0x0A : UInt8(ascii: "a") + UInt8(value % 26)
        }
    }

    static func stream(_ range: Range<Int>, seed: UInt64) -> Data {
        Data(range.map { streamByte($0, seed: seed) })
    }

    /// The byte at `index` of write `tag`.
    static func writeByte(tag: Int, index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: tag &* 31 &+ index)
    }

    /// Draws a schedule from `seed`. A `long` schedule (``SeededGenerator/isLong``) has 2,000–5,000 steps, a
    /// disconnect call (if any) among its last 20, and draws what ends a life early (a zero timeout, a separator
    /// maximum the separator may lie beyond) rarely enough that most of its steps run.
    static func draw(seed: UInt64, long: Bool = SeededGenerator.isLong) -> AsyncSocketSimSchedule {
        var random = SeededGenerator(seed: seed)
        var schedule = AsyncSocketSimSchedule(seed: seed, long: long)
        let count = long ? Int.random(in: 2_000...5_000, using: &random) : Int.random(in: 8...36, using: &random)
        let lastStretch = long ? count - 20 : count * 2 / 3
        let endsAt: Int? = random.chance(0.35) ? Int.random(in: lastStretch..<count, using: &random) : nil
        var lastReadTag: Int?
        for index in 0..<count {
            let tag = index + 1
            let operation: Operation
            if index == endsAt {
                operation =
                    [
                        Operation.disconnect, .disconnectAfterReading, .disconnectAfterWriting,
                        .disconnectAfterReadingAndWriting,
                    ][Int.random(in: 0..<4, using: &random)]
            } else if random.chance(0.7) {
                operation = .read(drawRead(&random, long: long), timeout: drawTimeout(&random, long: long))
            } else {
                let size =
                    random.chance(0.05) ? 0 : Int.random(in: 1...(random.chance(0.1) ? 200_000 : 4096), using: &random)
                operation = .write(count: size, timeout: drawTimeout(&random, long: long))
            }
            var site = [Site.otherThread, .runLoop, .insideCallback][Int.random(in: 0..<3, using: &random)]
            if site == .insideCallback && lastReadTag == nil { site = .runLoop }
            if case .read(let read, _) = operation, read.isValid { lastReadTag = tag }
            schedule.steps.append(Step(tag: tag, operation: operation, site: site))
        }
        schedule.ending =
            [Ending.keepOpen, .keepOpen, .halfClose, .halfClose, .reset][Int.random(in: 0..<5, using: &random)]
        return schedule
    }

    private static func drawTimeout(_ random: inout SeededGenerator, long: Bool) -> TimeInterval {
        if random.chance(long ? 0.000_05 : 0.03) { return 0 }
        return [-1, .nan, .infinity, 1e300, 30, -.infinity][Int.random(in: 0..<6, using: &random)]
    }

    private static func drawBuffer(_ random: inout SeededGenerator) -> Buffer? {
        guard random.chance(0.3) else { return nil }
        let length = Int.random(in: 0...16, using: &random)
        let offset = random.chance(0.05) ? UInt(length + 1) : UInt.random(in: 0...UInt(length), using: &random)
        return Buffer(length: length, offset: offset)
    }

    private static func drawRead(_ random: inout SeededGenerator, long: Bool) -> Read {
        let buffer = drawBuffer(&random)
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let max: UInt = random.chance(0.4) ? UInt.random(in: 1...64, using: &random) : 0
            return .available(maxLength: max, buffer: buffer)
        case 1:
            return .length(random.chance(0.03) ? 0 : UInt.random(in: 1...64, using: &random), buffer: buffer)
        default:
            let separators = [Data([0x0A]), Data([0x0D, 0x0A]), Data()]
            let sep = random.chance(0.03) ? separators[2] : separators[Int.random(in: 0..<2, using: &random)]
            // Every separator lies within 32 bytes: a long schedule draws a maximum below that rarely.
            let max: UInt =
                !random.chance(0.3)
                ? 0
                : long && !random.chance(0.000_2)
                    ? UInt.random(in: 32...64, using: &random) : UInt.random(in: 1...40, using: &random)
            return .separator(sep, maxLength: max, buffer: buffer)
        }
    }
}
