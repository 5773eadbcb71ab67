import Foundation

/// The soak's samples and their judgement: a table, a terminal chart of resident memory over time, the growth after
/// warm-up (the first 20 % of samples) and the least-squares slope.
struct SoakReport {
    /// One sample of this process (and the peers' memory, summed).
    struct Sample {
        var seconds: Double
        var resident: Int
        var descriptors: Int
        var peersResident: Int
    }

    var samples: [Sample] = []

    /// Samples after warm-up (at least 2 when there are any).
    var steady: ArraySlice<Sample> {
        let skip = min(samples.count / 5, max(0, samples.count - 2))
        return samples.dropFirst(skip)
    }

    /// Growth after warm-up: the mean of the last 3 steady samples over the mean of the first 3, minus 1.
    var growth: Double {
        let steady = Array(steady)
        guard steady.count >= 2 else { return 0 }
        let width = min(3, steady.count / 2)
        let first = steady.prefix(width).map { Double($0.resident) }.reduce(0, +) / Double(width)
        let last = steady.suffix(width).map { Double($0.resident) }.reduce(0, +) / Double(width)
        return last / first - 1
    }

    /// Least-squares slope of steady resident memory, in MiB per minute.
    var slopeMiBPerMinute: Double {
        let points = steady.map { ($0.seconds, Double($0.resident) / 1_048_576) }
        guard points.count >= 2 else { return 0 }
        let meanX = points.map(\.0).reduce(0, +) / Double(points.count)
        let meanY = points.map(\.1).reduce(0, +) / Double(points.count)
        let covariance = points.map { ($0.0 - meanX) * ($0.1 - meanY) }.reduce(0, +)
        let variance = points.map { ($0.0 - meanX) * ($0.0 - meanX) }.reduce(0, +)
        return variance > 0 ? covariance / variance * 60 : 0
    }

    func table() -> String {
        var lines = ["|   t (s) | RSS here | descriptors | RSS of the 5 peers |", "|---|---|---|---|"]
        for sample in samples {
            lines.append(
                "| \(String(format: "%7.0f", sample.seconds)) | \(ProcessProbe.mib(sample.resident)) | "
                    + "\(sample.descriptors) | \(ProcessProbe.mib(sample.peersResident)) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// Resident memory over time, one column per sample, `height` rows, in eighth blocks.
    func chart(height: Int = 10) -> String {
        guard let low = samples.map(\.resident).min(), let high = samples.map(\.resident).max() else { return "" }
        let span = max(Double(high - low), 1)
        let blocks = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        var rows: [String] = []
        for row in (0..<height).reversed() {
            let label = Double(low) + span * Double(row + 1) / Double(height)
            var line = String(format: "%7.1f MiB ┤", label / 1_048_576)
            for sample in samples {
                let level = Double(sample.resident - low) / span * Double(height)
                let eighths = Int(((level - Double(row)) * 8).rounded())
                line += blocks[max(0, min(8, eighths))]
            }
            rows.append(line)
        }
        let lastSeconds = samples.last?.seconds ?? 0
        rows.append(
            String(format: "%7.1f MiB └", Double(low) / 1_048_576) + String(repeating: "─", count: samples.count)
        )
        rows.append("              0 s … \(String(format: "%.0f", lastSeconds)) s, one column per sample")
        return rows.joined(separator: "\n")
    }
}
