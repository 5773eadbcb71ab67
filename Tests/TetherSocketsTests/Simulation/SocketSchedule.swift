import Foundation
import TetherTestSupport

/// A schedule for one connection's life, drawn from a seed: the peer's byte stream, the reads and writes the socket
/// issues (what, from which thread, how many outstanding), and how the life ends. Its description is the replay.
struct SocketSchedule: CustomStringConvertible {
    /// One read a schedule issues.
    enum Read: Equatable, CustomStringConvertible {
        /// What is available; `maxLength` 0 = no cap (`buffered`: into a caller's buffer at an offset).
        case available(maxLength: Int, buffered: Bool)
        case length(Int, buffered: Bool)
        /// Up to and including `separator`; `maxLength` 0 = no cap.
        case separator([UInt8], maxLength: Int)

        var description: String {
            switch self {
            case .available(let max, let buffered): "avail(\(max)\(buffered ? ",buf" : ""))"
            case .length(let length, let buffered): "len(\(length)\(buffered ? ",buf" : ""))"
            case .separator(let separator, let max): "sep(\(separator),\(max))"
            }
        }
    }

    /// Who issues an operation.
    enum Issuer: CustomStringConvertible {
        /// The thread the driver runs on (a callback's queue or loop, or the test's task for the first ones).
        case current
        /// Another thread, synchronously (`DispatchQueue.sync`): the call still happens before the next one.
        case otherThread

        var description: String { self == .current ? "cur" : "other" }
    }

    struct Step: CustomStringConvertible {
        var read: Read
        /// A value that means "no timeout": negative, NaN, infinite or beyond the engine's clock, or long.
        var timeout: TimeInterval
        var issuer: Issuer
        /// A write issued before the read (its size), if any.
        var write: Int?
        /// Reads wanted outstanding once this one is issued and the next may follow.
        var window: Int

        var description: String {
            "\(read)@\(timeout)/\(issuer)" + (write.map { "+w\($0)" } ?? "") + "/\(window)"
        }
    }

    /// How the life ends once every step's read has completed (or earlier, when a read cannot complete).
    enum Ending: CustomStringConvertible {
        case disconnect
        case disconnectAfterReading(finalReads: Int)
        case disconnectAfterWriting(finalWrite: Int)
        /// The peer sends `streamLength` bytes and closes its side; a last read asks for one byte more.
        case peerCloses(streamLength: Int)
        /// The peer stops sending; a last read wants more than it sent, with `timeout`; the delegate answers the
        /// timeout question with `extension` once.
        case stall(timeout: TimeInterval, extension: TimeInterval)
        /// The user's last reference goes away.
        case release

        var description: String {
            switch self {
            case .disconnect: "disconnect"
            case .disconnectAfterReading(let reads): "afterReading(\(reads))"
            case .disconnectAfterWriting(let size): "afterWriting(\(size))"
            case .peerCloses(let length): "peerCloses(\(length))"
            case .stall(let timeout, let answer): "stall(\(timeout), ext \(answer))"
            case .release: "release"
            }
        }
    }

    static let noTimeouts: [TimeInterval] = [-1, -.infinity, .nan, .infinity, 1e300, 9.3e9, 120]

    let seed: UInt64
    let stream: SimulatedStream
    let steps: [Step]
    let ending: Ending
    /// The peer's pauses and chunk sizes are drawn from this seed.
    let peerSeed: UInt64
    /// A TLS schedule: `startTLS` is issued just before step `tls.step`'s write and read (after every step when it
    /// equals the count); the peer switches to TLS after `plaintextSent` bytes of its stream and `plaintextReceived`
    /// bytes of the socket's, which the steps before it read and write exactly.
    let tls: (step: Int, plaintextSent: Int, plaintextReceived: Int)?

    /// A schedule of `seed`; with `tls`, one that switches to TLS at a drawn step (the plaintext schedule of a seed
    /// draws the same whether or not TLS schedules exist). A `long` schedule (``SeededGenerator/isLong``) has
    /// 2,000–5,000 steps, and draws the separator maxima that end a life early (a separator past them) rarely
    /// enough that most of its steps run.
    init(seed: UInt64, tls: Bool = false, long: Bool = SeededGenerator.isLong) {
        var random = SeededGenerator(seed: seed)
        self.seed = seed
        let separatorLength = Int.random(in: 1...2, using: &random)
        stream = SimulatedStream(
            seed: random.next(),
            separator: (0..<separatorLength).map { _ in UInt8.random(in: 0..<SimulatedStream.alphabet, using: &random) }
        )
        peerSeed = random.next()
        let count = long ? Int.random(in: 2_000...5_000, using: &random) : Int.random(in: 20...300, using: &random)
        let drawn = stream
        var steps = (0..<count).map { _ in Self.step(stream: drawn, long: long, using: &random) }
        var ending: Ending
        switch Int.random(in: 0..<6, using: &random) {
        case 0: ending = .disconnect
        case 1: ending = .disconnectAfterReading(finalReads: Int.random(in: 1...3, using: &random))
        case 2: ending = .disconnectAfterWriting(finalWrite: Int.random(in: 1...200_000, using: &random))
        case 3: ending = .peerCloses(streamLength: Int.random(in: 0...300_000, using: &random))
        case 4:
            ending = .stall(
                timeout: [0, 0.02, 0.1, 0.25].randomElement(using: &random)!,
                extension: [0, -1, .nan, 0.05, 0.15].randomElement(using: &random)!
            )
        default: ending = .release
        }
        guard tls else {
            self.steps = steps
            self.ending = ending
            self.tls = nil
            return
        }
        // Before the switch only reads whose length the stream decides (so that they take exactly the plaintext):
        // a read of what is available becomes a read of a length, a separator read loses its maximum.
        let switchStep = random.chance(0.3) ? 0 : Int.random(in: 0...min(count, 40), using: &random)
        var plaintext = 0
        var written = 0
        for index in 0..<switchStep {
            switch steps[index].read {
            case .available(let max, let buffered): steps[index].read = .length(max == 0 ? 16 : max, buffered: buffered)
            case .separator(let separator, _): steps[index].read = .separator(separator, maxLength: 0)
            case .length: break
            }
            switch steps[index].read {
            case .length(let length, _): plaintext += length
            case .separator:
                plaintext = drawn.separatorEnd(from: plaintext, limit: plaintext + 1 << 24) ?? plaintext
            case .available: break
            }
            written += steps[index].write ?? 0
        }
        if case .peerCloses(let length) = ending { ending = .peerCloses(streamLength: plaintext + length) }
        self.steps = steps
        self.ending = ending
        self.tls = (switchStep, plaintext, written)
    }

    private static func step(stream: SimulatedStream, long: Bool, using random: inout SeededGenerator) -> Step {
        let read: Read
        switch Int.random(in: 0..<10, using: &random) {
        case 0...1:
            let max = random.chance(0.5) ? 0 : Int.random(in: 1...300, using: &random)
            read = .available(maxLength: max, buffered: max > 0 || random.chance(0.3))
        case 2...5:
            let length =
                random.chance(0.1) ? Int.random(in: 1...90_000, using: &random) : Int.random(in: 1...64, using: &random)
            read = .length(length, buffered: random.chance(0.2))
        default:
            // A small maximum ends the life early (the read maxes out): rarely, so that most schedules run on. A
            // two-byte separator is past 512 bytes in about one read of 36: a long schedule draws 512 rarely too.
            let max =
                random.chance(0.6)
                ? 0
                : random.chance(long ? 0.000_5 : 0.05)
                    ? [2, 8].randomElement(using: &random)!
                    : long && random.chance(0.97)
                        ? [4_096, 65_536].randomElement(using: &random)!
                        : [512, 4_096, 65_536].randomElement(using: &random)!
            read = .separator(stream.separator, maxLength: max)
        }
        return Step(
            read: read,
            timeout: noTimeouts.randomElement(using: &random)!,
            issuer: random.chance(0.3) ? .otherThread : .current,
            write: random.chance(0.25) ? Int.random(in: 1...30_000, using: &random) : nil,
            window: Int.random(in: 1...4, using: &random)
        )
    }

    var description: String {
        "seed \(seed): stream(sep \(stream.separator)), \(steps.count) steps, ends \(ending)"
            + (tls.map {
                ", TLS before step \($0.step) (plaintext \($0.plaintextSent) in, \($0.plaintextReceived) out)"
            } ?? "")
            + ": "
            + steps.map(\.description).joined(separator: " ")
    }
}
