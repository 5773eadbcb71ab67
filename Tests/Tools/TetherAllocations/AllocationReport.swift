import Foundation

/// A run's results: per case, Tether's face and the engine's allocations per operation. Written as JSON for the
/// budget check and printed as the table of BENCHMARKS.md.
struct AllocationReport: Codable, Sendable {
    struct Row: Codable, Sendable {
        var name: String
        var tether: AllocationResult
        var engineName: String
        var engine: AllocationResult
    }

    var rows: [Row] = []

    /// The table: allocations per operation, the engine's, the difference; bytes per operation beside each.
    var table: String {
        var lines = [
            "| case | Tether allocs/op | engine allocs/op | difference | Tether bytes/op | engine bytes/op | engine |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for row in rows {
            let difference = row.tether.allocations - row.engine.allocations
            lines.append(
                "| \(row.name) | \(Self.format(row.tether.allocations)) | \(Self.format(row.engine.allocations)) | "
                    + "\(difference >= 0 ? "+" : "")\(Self.format(difference)) | "
                    + "\(Self.format(row.tether.bytes, digits: 0)) | \(Self.format(row.engine.bytes, digits: 0)) | "
                    + "\(row.engineName) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double, digits: Int = 1) -> String {
        String(format: "%.\(digits)f", value)
    }
}
