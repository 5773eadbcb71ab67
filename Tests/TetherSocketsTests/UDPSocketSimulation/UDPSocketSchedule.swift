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

    init(seed: UInt64, length: Int = 24) {
        self.seed = seed
        var random = SeededGenerator(seed: seed)
        var ops: [Op] = []
        var sequence = 0
        var peerSequence = 0
        for _ in 0..<length {
            switch Int.random(in: 0..<100, using: &random) {
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
                ops.append(.sends(sends, closing: random.chance(0.08)))
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

    var description: String {
        "seed \(seed)\(releaseWithoutClose ? ", released without close" : ""):\n"
            + ops.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
    }

    /// The bytes of datagram `sequence`: the number in the first 8 bytes when they fit, then a pattern of it.
    static func payload(_ sequence: Int, size: Int) -> Data {
        var data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ sequence) })
        if size >= 8 { withUnsafeBytes(of: UInt64(sequence).bigEndian) { data.replaceSubrange(0..<8, with: $0) } }
        return data
    }
}
