import Foundation
import NIOConcurrencyHelpers

/// A log-linear histogram of latencies in nanoseconds, in shards behind their own locks so that thousands of
/// connections can record at once; 32 sub-buckets per power of two (about 3 % resolution), up to about 2^40 ns.
final class LatencyHistogram: Sendable {
    static let subBuckets = 32
    static let bucketCount = 41 * subBuckets
    private let shards: [NIOLockedValueBox<[UInt64]>]

    init(shardCount: Int = 16) {
        shards = (0..<shardCount).map { _ in NIOLockedValueBox([UInt64](repeating: 0, count: Self.bucketCount)) }
    }

    static func index(of nanoseconds: UInt64) -> Int {
        let value = max(nanoseconds, 1)
        let exponent = 63 - value.leadingZeroBitCount
        if exponent < 5 { return Int(value) }
        let mantissa = Int((value >> UInt64(exponent - 5)) & 31)
        return min((exponent - 4) * subBuckets + mantissa, bucketCount - 1)
    }

    /// The lower bound in nanoseconds of bucket `index`.
    static func value(at index: Int) -> UInt64 {
        if index < subBuckets { return UInt64(index) }
        let exponent = index / subBuckets + 4
        let mantissa = UInt64(index % subBuckets)
        return (32 + mantissa) << UInt64(exponent - 5)
    }

    func record(_ nanoseconds: UInt64, shard: Int) {
        let index = Self.index(of: nanoseconds)
        shards[shard % shards.count].withLockedValue { $0[index] += 1 }
    }

    /// All shards summed.
    func merged() -> [UInt64] {
        var total = [UInt64](repeating: 0, count: Self.bucketCount)
        for shard in shards {
            shard.withLockedValue { counts in
                for index in counts.indices { total[index] += counts[index] }
            }
        }
        return total
    }

    var count: UInt64 { merged().reduce(0, +) }

    /// The latency at `quantile` (0...1) in nanoseconds (a bucket's lower bound).
    func percentile(_ quantile: Double) -> UInt64 {
        let counts = merged()
        let total = counts.reduce(0, +)
        guard total > 0 else { return 0 }
        let rank = UInt64((Double(total) * quantile).rounded(.up))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() {
            seen += count
            if seen >= max(rank, 1) { return Self.value(at: index) }
        }
        return Self.value(at: counts.count - 1)
    }

    /// "p50 … p99 … p99.9 … max" in readable units.
    func summary() -> String {
        let counts = merged()
        let maxIndex = counts.lastIndex { $0 > 0 } ?? 0
        return "p50 \(Self.text(percentile(0.5))), p99 \(Self.text(percentile(0.99))), "
            + "p99.9 \(Self.text(percentile(0.999))), max \(Self.text(Self.value(at: maxIndex)))"
    }

    static func text(_ nanoseconds: UInt64) -> String {
        let value = Double(nanoseconds)
        if value >= 1e9 { return String(format: "%.2f s", value / 1e9) }
        if value >= 1e6 { return String(format: "%.2f ms", value / 1e6) }
        return String(format: "%.0f µs", value / 1e3)
    }
}
