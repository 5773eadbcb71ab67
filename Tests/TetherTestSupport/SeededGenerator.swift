import Foundation

/// A seeded random number generator (SplitMix64) for the randomized tests: the same seed draws the same schedule on
/// every machine, so a failure's printed seed replays it.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that draws the sequence of `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// The seeds a randomized test runs: `TETHER_SIM_SEED=S` replays one; `TETHER_SIM_SEEDS=N` runs N seeds from
    /// `first` plus `TETHER_SIM_OFFSET` (0 by default; `scripts/simulate.sh` moves it on batch by batch); otherwise
    /// the `count` fixed seeds from `first` that CI runs.
    public static func seeds(first: UInt64, count: Int) -> [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["TETHER_SIM_SEED"].flatMap(UInt64.init) { return [one] }
        let total = environment["TETHER_SIM_SEEDS"].flatMap(Int.init) ?? count
        let offset = environment["TETHER_SIM_OFFSET"].flatMap(UInt64.init) ?? 0
        return (0..<UInt64(max(total, 0))).map { first &+ offset &+ $0 }
    }

    /// Long mode (`TETHER_SIM_LONG=1`, `scripts/simulate.sh --long`): each schedule runs many more operations on its
    /// connection, the peers' pauses are a tenth as long (still drawn, still there), and a test runs
    /// ``concurrency`` schedules at once. A failure's replay needs the same mode.
    public static let isLong = ProcessInfo.processInfo.environment["TETHER_SIM_LONG"].map { $0 != "0" } ?? false

    /// How many schedules a test runs at once: 1, or `TETHER_SIM_CONCURRENCY` (4 by default) in long mode.
    public static let concurrency: Int = {
        guard isLong else { return 1 }
        return max(ProcessInfo.processInfo.environment["TETHER_SIM_CONCURRENCY"].flatMap(Int.init) ?? 4, 1)
    }()

    /// A peer's pause drawn as `microseconds`, as long as the mode wants it (a tenth in long mode).
    public static func pause(_ microseconds: UInt32) -> UInt32 {
        isLong ? microseconds / 10 : microseconds
    }

    /// How the replay of a failing seed is spelled (with the long mode when it is on).
    public static func replay(_ seed: UInt64) -> String {
        (isLong ? "TETHER_SIM_LONG=1 " : "") + "TETHER_SIM_SEED=\(seed)"
    }

    /// Runs `body` for every seed, ``concurrency`` at a time; the results in the seeds' order.
    public static func run<Result: Sendable>(
        _ seeds: [UInt64],
        _ body: @escaping @Sendable (UInt64) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            var results = [Result?](repeating: nil, count: seeds.count)
            var next = 0
            func add() {
                guard next < seeds.count else { return }
                let (index, seed) = (next, seeds[next])
                group.addTask { (index, try await body(seed)) }
                next += 1
            }
            for _ in 0..<concurrency { add() }
            while let (index, result) = try await group.next() {
                results[index] = result
                add()
            }
            return results.map { $0! }
        }
    }

    /// The seeds grouped as a parameterized test takes them: one seed per case, or in long mode ``concurrency``
    /// seeds per case (run at once with ``run(_:_:)``), so that a run of one case at a time still runs several
    /// schedules at once.
    public static func batches(_ seeds: [UInt64]) -> [[UInt64]] {
        stride(from: 0, to: seeds.count, by: concurrency).map { Array(seeds[$0..<min($0 + concurrency, seeds.count)]) }
    }

    /// Runs `body` for every seed (``concurrency`` at a time), prints the summary line (``report(face:schedules:operations:failing:)``)
    /// and returns the failures' reports. `body` returns a failing schedule's report (nil: it passed) and how many
    /// operations it issued.
    public static func simulate(
        face: String,
        seeds: [UInt64],
        _ body: @escaping @Sendable (UInt64) async throws -> (failure: String?, operations: Int)
    ) async throws -> [String] {
        let results = try await run(seeds, body)
        let failures = results.compactMap(\.failure)
        report(
            face: face,
            schedules: seeds.count,
            operations: results.map(\.operations).reduce(0, +),
            failing: failures.count
        )
        return failures
    }

    /// Prints one line that `scripts/simulate.sh` adds up: `simulation <face>: <n> schedules, <m> operations,
    /// <v> failing`.
    public static func report(face: String, schedules: Int, operations: Int, failing: Int) {
        print("simulation \(face): \(schedules) schedules, \(operations) operations, \(failing) failing")
    }
}
