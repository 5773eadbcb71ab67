import NIOConcurrencyHelpers

/// What the client side of a TCP run shares: the stop flag, the latency histogram and the totals every connection
/// adds when it ends (frames sent, its ``SequenceTally``, frames never answered, errors).
final class RunControl: Sendable {
    /// The totals of ended connection lives.
    struct Totals {
        var sent = 0
        var tally = SequenceTally()
        var unanswered = 0
        var errors = 0
        var lives = 0
        var firstErrors: [String] = []

        var lost: Int { tally.lost + unanswered }
        var clean: Bool { lost == 0 && tally.duplicated == 0 && tally.reordered == 0 && tally.corrupted == 0 }
    }

    let histogram = LatencyHistogram()
    private let stopped = NIOLockedValueBox(false)
    private let totals = NIOLockedValueBox(Totals())
    private let connectErrors = NIOLockedValueBox(0)

    var isStopped: Bool { stopped.withLockedValue { $0 } }

    func stop() {
        stopped.withLockedValue { $0 = true }
    }

    /// A connection life ended: `sent` frames written, `tally` of the echoes, `error` if it ended by one.
    func finish(sent: Int, tally: SequenceTally, error: String?) {
        totals.withLockedValue { totals in
            totals.sent += sent
            totals.tally.add(tally)
            totals.unanswered += max(0, sent - Int(tally.next))
            totals.lives += 1
            if let error {
                totals.errors += 1
                if totals.firstErrors.count < 5 { totals.firstErrors.append(error) }
            }
        }
    }

    func connectFailed(_ error: String) {
        connectErrors.withLockedValue { $0 += 1 }
        totals.withLockedValue { totals in
            if totals.firstErrors.count < 5 { totals.firstErrors.append("connect: \(error)") }
        }
    }

    var snapshot: Totals { totals.withLockedValue { $0 } }
    var failedConnects: Int { connectErrors.withLockedValue { $0 } }
}
