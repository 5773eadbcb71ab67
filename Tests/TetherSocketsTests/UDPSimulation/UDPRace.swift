import Foundation
import TetherTestSupport

/// How a ``UDPSchedule`` ends: sends from several threads at once, peer datagrams arriving and callbacks being
/// delivered, while one of the threads ends the socket at a drawn point of its own sends: `close()`,
/// `closeAfterSending()`, or the user's last reference going away (the other threads hold weak references).
struct UDPRace: CustomStringConvertible {
    enum End: CaseIterable {
        case close, closeAfterSending, release
    }

    struct Send: CustomStringConvertible {
        var tag: Int
        var size: Int
        var to: UDPSchedule.Target
        var timeout: TimeInterval

        var description: String { "\(tag): \(size) B → \(to) @\(timeout)" }
    }

    /// Race sends' tags start here (the schedule's own sends count from 1).
    static let firstTag = 100_000

    let end: End
    /// Each thread's sends, in its order; thread 0 ends the socket just before its send number `endAt`.
    let threads: [[Send]]
    let endAt: Int
    /// Sizes of the datagrams peer A sends to the socket before the end (numbered from `firstSequence`).
    let peerDatagrams: [Int]
    let firstSequence: Int
    /// `beginReceiving` before the race.
    let receiving: Bool

    init(using random: inout SeededGenerator, firstSequence: Int) {
        end = End.allCases.randomElement(using: &random)!
        var tag = Self.firstTag
        threads = (0..<Int.random(in: 2...4, using: &random)).map { _ in
            (0..<Int.random(in: 0...12, using: &random)).map { _ in
                tag += 1
                let size =
                    random.chance(0.7)
                    ? Int.random(in: 1...1_500, using: &random) : Int.random(in: 1_501...9_000, using: &random)
                return Send(
                    tag: tag,
                    size: size,
                    to: UDPSchedule.Target.allCases.randomElement(using: &random)!,
                    timeout: UDPSchedule.timeouts.randomElement(using: &random)!
                )
            }
        }
        endAt = Int.random(in: 0...threads[0].count, using: &random)
        peerDatagrams = (0..<Int.random(in: 0...6, using: &random)).map { _ in Int.random(in: 8...1_200, using: &random)
        }
        self.firstSequence = firstSequence
        receiving = random.chance(0.7)
    }

    /// The thread that sends `tag`.
    func thread(of tag: Int) -> Int? {
        threads.firstIndex { $0.contains { $0.tag == tag } }
    }

    var description: String {
        "race: \(end) by thread 0 before its send \(endAt)\(receiving ? ", receiving" : ""), peer sends "
            + "\(peerDatagrams) from #\(firstSequence)\n"
            + threads.enumerated().map { "    thread \($0.offset): \($0.element)" }.joined(separator: "\n")
    }
}
