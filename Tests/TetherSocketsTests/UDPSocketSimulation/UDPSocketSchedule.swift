import Foundation
import TetherTestSupport

/// One randomized schedule for a ``UDPSocket`` (the async face): the operations, drawn from a seed, in the order they
/// run, and how it ends (`close()`, or the last reference dropped without it).
struct UDPSocketSchedule: CustomStringConvertible {
    enum Target: CaseIterable {
        case peerA, peerB, closedPort
    }

    struct Send: CustomStringConvertible {
        /// Unique in the schedule; the payload carries it.
        var sequence: Int
        var size: Int
        var to: Target
        /// Which of the burst's concurrent tasks sends it (each task sends its own in order).
        var task: Int
        /// Sent from a task that is cancelled as soon as it starts.
        var cancelled: Bool

        var description: String {
            "#\(sequence) \(size) B → \(to) task \(task)\(cancelled ? " cancelled" : "")"
        }
    }

    enum Op: CustomStringConvertible {
        /// Sends from up to three concurrent tasks; with `closing`, a `close()` runs concurrently with them.
        case sends([Send], closing: Bool)
        /// Peer A sends datagrams of these sizes (numbered `first`, `first + 1`, …) to the socket.
        case peerSends(first: Int, sizes: [Int])
        /// The consumer may take `n` more datagrams from ``UDPSocket/datagrams``.
        case receive(Int)
        /// The consumer takes everything owed; every datagram sent to the socket so far arrived or was dropped.
        case drain
        case close

        var description: String {
            switch self {
            case .sends(let sends, let closing):
                "sends[\(sends.map(\.description).joined(separator: ", "))]\(closing ? " racing close" : "")"
            case .peerSends(let first, let sizes): "peerSends(from #\(first): \(sizes) B)"
            case .receive(let count): "receive(\(count))"
            case .drain: "drain"
            case .close: "close"
            }
        }
    }

    let seed: UInt64
    let ops: [Op]
    /// Ends by dropping the socket's last reference instead of closing it (when no `close` ran).
    let releaseWithoutClose: Bool

    /// Drawn in long mode (its replay needs `TETHER_SIM_LONG=1`).
    let long: Bool

    /// A schedule of `seed`: 24 operations, or in long mode (``SeededGenerator/isLong``) 1,000–2,500, of which a
    /// close (alone or racing a burst), after which the socket only answers `.closed`, is drawn about one time in
    /// 2,000.
    init(seed: UInt64, long: Bool = SeededGenerator.isLong) {
        self.seed = seed
        self.long = long
        var random = SeededGenerator(seed: seed)
        var ops: [Op] = []
        var sequence = 0
        var peerSequence = 0
        let length = long ? Int.random(in: 1_000...2_500, using: &random) : 24
        let closing = long ? 0.000_5 : 0.08
        for _ in 0..<length {
            var roll = Int.random(in: 0..<100, using: &random)
            if long, roll >= 95, !random.chance(0.01) { roll = Int.random(in: 0..<95, using: &random) }
            switch roll {
            case 0..<40:
                let tasks = Int.random(in: 1...3, using: &random)
                var sends: [Send] = []
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    sequence += 1
                    let size: Int
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0: size = Int.random(in: 0...7, using: &random)
                    case 1...6: size = Int.random(in: 8...1_500, using: &random)
                    default: size = Int.random(in: 1_501...9_000, using: &random)
                    }
                    sends.append(
                        Send(
                            sequence: sequence,
                            size: size,
                            to: Target.allCases.randomElement(using: &random)!,
                            task: Int.random(in: 0..<tasks, using: &random),
                            cancelled: random.chance(0.15)
                        )
                    )
                }
                ops.append(.sends(sends, closing: random.chance(closing)))
            case 40..<62:
                let sizes = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                    Int.random(in: 8...1_400, using: &random)
                }
                ops.append(.peerSends(first: peerSequence + 1, sizes: sizes))
                peerSequence += sizes.count
            case 62..<80: ops.append(.receive(Int.random(in: 1...4, using: &random)))
            case 80..<95: ops.append(.drain)
            default: ops.append(.close)
            }
        }
        self.ops = ops
        releaseWithoutClose = random.chance(0.3)
    }

    /// The replay and the listing (a long schedule's first and last 40 operations).
    var description: String {
        let listed = ops.enumerated().map { "  \($0.offset): \($0.element)" }
        return "\(long ? "TETHER_SIM_LONG=1 " : "")TETHER_SIM_SEED=\(seed), \(ops.count) operations"
            + "\(releaseWithoutClose ? ", released without close" : ""):\n"
            + (listed.count > 100
                ? (listed.prefix(40) + ["  …"] + listed.suffix(40)).joined(separator: "\n")
                : listed.joined(separator: "\n"))
    }

    /// The bytes of datagram `sequence`: the number in the first 8 bytes when they fit, then a pattern of it.
    static func payload(_ sequence: Int, size: Int) -> Data {
        var data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ sequence) })
        if size >= 8 { withUnsafeBytes(of: UInt64(sequence).bigEndian) { data.replaceSubrange(0..<8, with: $0) } }
        return data
    }
}
