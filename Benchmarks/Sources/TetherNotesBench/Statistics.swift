import Foundation

/// Medians, percentiles and the units the report prints.
enum Statistics {
    /// The median of `values` (the mean of the middle two for an even count); 0 for none.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The value at `quantile` (0...1) of `values` (nearest rank); 0 for none.
    static func percentile<Value: BinaryInteger>(_ values: [Value], _ quantile: Double) -> Value {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((Double(sorted.count) * quantile).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// Nanoseconds as µs or ms.
    static func duration<Value: BinaryInteger>(_ nanoseconds: Value) -> String {
        let value = Double(nanoseconds)
        if abs(value) >= 1e7 { return String(format: "%.1f ms", value / 1e6) }
        if abs(value) >= 1e6 { return String(format: "%.2f ms", value / 1e6) }
        return String(format: "%.0f µs", value / 1e3)
    }

    /// A rate with thousands as `k`.
    static func rate(_ value: Double) -> String {
        value >= 10_000 ? String(format: "%.1f k", value / 1e3) : String(format: "%.0f", value)
    }
}
