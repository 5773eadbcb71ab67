import NIOConcurrencyHelpers

/// A peer server's counters: connections accepted and open, frames echoed, frames that failed their CRC or could not
/// be decoded, and HTTP responses by kind. Printed on the peer's `stats` line.
final class ServerCounters: Sendable {
    private let values = NIOLockedValueBox([String: Int]())

    func add(_ name: String, _ amount: Int = 1) {
        values.withLockedValue { $0[name, default: 0] += amount }
    }

    func snapshot() -> [String: Int] {
        values.withLockedValue { $0 }
    }
}
