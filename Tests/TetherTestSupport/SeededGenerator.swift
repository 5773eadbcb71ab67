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

    /// Prints one line that `scripts/simulate.sh` adds up: `simulation <face>: <n> schedules, <m> operations,
    /// <v> failing`.
    public static func report(face: String, schedules: Int, operations: Int, failing: Int) {
        print("simulation \(face): \(schedules) schedules, \(operations) operations, \(failing) failing")
    }
}
