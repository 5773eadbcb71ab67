import Foundation

/// The committed allocation budgets (`Tests/Data/allocation-budgets.json`): per case, the allocations per operation
/// it may make, and the noise tolerated above and below.
struct AllocationBudgets: Decodable, Sendable {
    struct Budget: Decodable, Sendable, Equatable {
        /// Allocations per operation.
        var allocations: Double
        /// How far a count may lie from `allocations` (run-to-run noise) before it fails.
        var tolerance: Double
    }

    /// How far under its budget a case may fall before the budget must be lowered: a tenth.
    static let lowerBelow = 0.9

    var cases: [String: Budget]

    /// The file next to the tests.
    static var fileURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Data/allocation-budgets.json")
    }

    static func load(from url: URL = fileURL) throws -> AllocationBudgets {
        try JSONDecoder().decode(AllocationBudgets.self, from: Data(contentsOf: url))
    }

    /// Every way `counts` (allocations per operation, by case) break these budgets, each a sentence naming the case,
    /// its count and its budget; empty when every case holds.
    func violations(of counts: [String: Double]) -> [String] {
        var found: [String] = []
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
            let shown = String(format: "%.1f", count)
            guard let budget = cases[name] else {
                found.append(
                    "\(name): \(shown) allocations per operation and no budget: add "
                        + "\"\(name)\": {\"allocations\": \(shown), \"tolerance\": …} to allocation-budgets.json"
                )
                continue
            }
            let limit = String(format: "%.1f", budget.allocations)
            if count > budget.allocations + budget.tolerance {
                found.append(
                    "\(name): \(shown) allocations per operation, over its budget of \(limit) "
                        + "(tolerance \(budget.tolerance))"
                )
            } else if count < budget.allocations * Self.lowerBelow && budget.allocations - count > budget.tolerance {
                found.append(
                    "\(name): \(shown) allocations per operation, far under its budget of \(limit): lower the budget "
                        + "to \(shown) in allocation-budgets.json"
                )
            }
        }
        for name in cases.keys.sorted() where counts[name] == nil {
            found.append("\(name): a budget for a case the harness did not run: remove it or restore the case")
        }
        return found
    }
}
