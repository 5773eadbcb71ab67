import Foundation
import TetherTestSupport

/// One randomized schedule for a ``GCDAsyncUdpSocket``: the operations, drawn from a seed, in the order they run.
struct UDPSchedule: CustomStringConvertible {
    enum Target: CaseIterable {
        case peerA, peerB, closedPort
    }

    enum Caller: CaseIterable {
        case test, delegateQueue, otherThread
    }

    enum Receive: CaseIterable {
        case begin, pause, once
    }

    enum Op: CustomStringConvertible {
        /// A send of `size` bytes (0 is the original's no-op: no callback).
        case send(tag: Int, size: Int, to: Target, timeout: TimeInterval, from: Caller)
        /// A peer sends `size` bytes numbered `sequence` to the socket's first port.
        case peerSend(sequence: Int, size: Int)
        case receive(Receive)
        case broadcast(Bool)
        case closeAfterSending
        case close

        var description: String {
            switch self {
            case .send(let tag, let size, let to, let timeout, let from):
                "send(tag \(tag), \(size) B → \(to), timeout \(timeout), from \(from))"
            case .peerSend(let sequence, let size): "peerSend(#\(sequence), \(size) B)"
            case .receive(let mode): "receive(\(mode))"
            case .broadcast(let on): "enableBroadcast(\(on))"
            case .closeAfterSending: "closeAfterSending"
            case .close: "close"
            }
        }
    }

    static let timeouts: [TimeInterval] = [0, -1, -0.5, .nan, .infinity, -.infinity, 1e300, 0.2, 5]

    let seed: UInt64
    let ops: [Op]
    /// How it ends, after every operation's results arrived.
    let race: UDPRace

    /// Drawn in long mode (its replay needs `TETHER_SIM_LONG=1`).
    let long: Bool

    /// A schedule of `seed`: 30 operations, or in long mode (``SeededGenerator/isLong``) 2,000–5,000, of which a
    /// close (that ends a life, and with life 1 the peer's datagrams) is drawn about one time in 3,000.
    init(seed: UInt64, long: Bool = SeededGenerator.isLong) {
        self.seed = seed
        self.long = long
        var random = SeededGenerator(seed: seed)
        var ops: [Op] = []
        var tag = 0
        var sequence = 0
        let length = long ? Int.random(in: 2_000...5_000, using: &random) : 30
        for _ in 0..<length {
            var roll = Int.random(in: 0..<100, using: &random)
            if long, roll >= 90, !random.chance(0.003) { roll = Int.random(in: 0..<90, using: &random) }
            switch roll {
            case 0..<55:
                tag += 1
                // Mostly small, some up to 9000, some empty.
                let size: Int
                switch Int.random(in: 0..<10, using: &random) {
                case 0: size = 0
                case 1...6: size = Int.random(in: 1...1_500, using: &random)
                default: size = Int.random(in: 1_501...9_000, using: &random)
                }
                ops.append(
                    .send(
                        tag: tag,
                        size: size,
                        to: Target.allCases.randomElement(using: &random)!,
                        timeout: Self.timeouts.randomElement(using: &random)!,
                        from: Caller.allCases.randomElement(using: &random)!
                    )
                )
            case 55..<70:
                sequence += 1
                ops.append(.peerSend(sequence: sequence, size: Int.random(in: 8...1_200, using: &random)))
            case 70..<84: ops.append(.receive(Receive.allCases.randomElement(using: &random)!))
            case 84..<90: ops.append(.broadcast(random.chance(0.5)))
            case 90..<95: ops.append(.closeAfterSending)
            default: ops.append(.close)
            }
        }
        self.ops = ops
        race = UDPRace(using: &random, firstSequence: sequence + 1)
    }

    /// The replay and the listing (a long schedule's first and last 40 operations).
    var description: String {
        let listed = ops.enumerated().map { "  \($0.offset): \($0.element)" }
        return "\(long ? "TETHER_SIM_LONG=1 " : "")TETHER_SIM_SEED=\(seed), \(ops.count) operations:\n"
            + (listed.count > 100
                ? (listed.prefix(40) + ["  …"] + listed.suffix(40)).joined(separator: "\n")
                : listed.joined(separator: "\n"))
            + "\n  \(race)"
    }

    /// The bytes of send `tag`: its tag in the first 8 bytes when they fit, then a pattern of the tag.
    static func payload(tag: Int, size: Int) -> Data {
        var data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ tag) })
        if size >= 8 { withUnsafeBytes(of: UInt64(tag).bigEndian) { data.replaceSubrange(0..<8, with: $0) } }
        return data
    }
}
