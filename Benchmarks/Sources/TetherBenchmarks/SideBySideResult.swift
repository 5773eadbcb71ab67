import Foundation

/// The rounds of one side-by-side row and what the table shows of them: medians of wall and CPU time of each
/// variant, and the paired medians of the ratios (raw / Tether within one round, so > 1 means Tether is faster or
/// cheaper).
struct SideBySideResult {
    /// Wall-clock and process CPU seconds of one round.
    struct Sample {
        var wall: Double
        var cpu: Double
    }

    let row: SideBySideRow
    var raw: [Sample] = []
    var tether: [Sample] = []

    init(row: SideBySideRow) {
        self.row = row
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var wallRatio: Double { Self.median(zip(raw, tether).map { $0.wall / $1.wall }) }
    var cpuRatio: Double { Self.median(zip(raw, tether).map { $0.cpu / $1.cpu }) }

    static let header = """
        | row | wall Tether | wall raw | wall ratio | CPU Tether | CPU raw | CPU ratio | target |
        |---|---|---|---|---|---|---|---|
        """

    /// "0.412 s (651 MB/s)": the median wall time and the rate it gives.
    private func wallText(_ samples: [Sample]) -> String {
        let seconds = Self.median(samples.map(\.wall))
        return String(format: "%.3f s (%@)", seconds, format(row.amount / seconds, row.unit))
    }

    private func cpuText(_ samples: [Sample]) -> String {
        String(format: "%.3f s", Self.median(samples.map(\.cpu)))
    }

    var tableLine: String {
        let cells = [
            "\(row.number). \(row.name)", wallText(tether), wallText(raw), String(format: "%.2f×", wallRatio),
            cpuText(tether),
            cpuText(raw), String(format: "%.2f×", cpuRatio), row.target,
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }
}
