import Foundation
import Testing
import TetherTestSupport

/// The allocation harness (`TetherAllocations`, which counts every malloc of its process) against the committed
/// budgets, as SwiftNIO keeps them: a case over its budget fails, and so does one far under it (its budget must come
/// down, so that the gain is kept).
@Suite struct AllocationBudgetTests {
    /// What the harness writes with `--json`.
    struct Report: Decodable {
        struct Counts: Decodable {
            var allocations: Double
        }

        struct Row: Decodable {
            var name: String
            var tether: Counts
        }

        var rows: [Row]
    }

    /// Whether this process runs under a sanitizer's allocator (an address- or thread-sanitizer build): the harness,
    /// built the same way, cannot count allocations there (its counting `malloc` and the sanitizer's collide).
    static let runsUnderASanitizer =
        dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

    @Test(
        .timeLimit(.minutes(5)),
        .disabled(
            if: runsUnderASanitizer,
            "allocation counts need the system allocator: a sanitizer build replaces it (run scripts/test.sh)"
        )
    )
    func everyCaseStaysWithinItsBudget() async throws {
        let harness = try BuiltProduct.require("TetherAllocations")
        let json = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-allocations-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try await CommandRun.run(harness, ["--json", json.path])
        try #require(run.status == 0, "the harness failed (\(run.status)):\n\(run.output)\n\(run.errors)")
        let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: json))
        let counts = Dictionary(uniqueKeysWithValues: report.rows.map { ($0.name, $0.tether.allocations) })
        let violations = try AllocationBudgets.load().violations(of: counts)
        for violation in violations { Issue.record("\(violation)") }
        if !violations.isEmpty { print(run.output) }
    }

    static let budgets = AllocationBudgets(cases: [
        "a": .init(allocations: 100, tolerance: 2),
        "b": .init(allocations: 0.5, tolerance: 0.2),
    ])

    @Test(arguments: [
        // Within the tolerance either way.
        (["a": 101.9, "b": 0.5], 0),
        (["a": 98.1, "b": 0.31], 0),
        // Over the budget and its tolerance.
        (["a": 102.1, "b": 0.5], 1),
        (["a": 100, "b": 0.71], 1),
        // More than a tenth and more than the tolerance under.
        (["a": 89.9, "b": 0.5], 1),
        // A tenth under a small budget, but within its tolerance: noise, not a gain.
        (["a": 100, "b": 0.35], 0),
        // A case without a budget, a budget without a case.
        (["a": 100, "b": 0.5, "c": 1], 1),
        (["a": 100], 1),
    ])
    func aCountIsJudgedAgainstItsBudget(counts: [String: Double], expectedViolations: Int) {
        #expect(Self.budgets.violations(of: counts).count == expectedViolations)
    }

    @Test func aViolationNamesTheCaseItsCountAndItsBudget() {
        #expect(
            Self.budgets.violations(of: ["a": 120, "b": 0.5])
                == ["a: 120.0 allocations per operation, over its budget of 100.0 (tolerance 2.0)"]
        )
        let lower = "a: 50.0 allocations per operation, far under its budget of 100.0: lower the budget to 50.0 in "
        #expect(Self.budgets.violations(of: ["a": 50, "b": 0.5]) == [lower + "allocation-budgets.json"])
    }

    @Test func theCommittedBudgetsAreReadable() throws {
        let budgets = try AllocationBudgets.load()
        #expect(!budgets.cases.isEmpty)
        #expect(budgets.cases.values.allSatisfy { $0.allocations > 0 && $0.tolerance >= 0 })
    }
}
