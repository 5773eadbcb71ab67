import Foundation

/// The side-by-side runner: for each row, `rounds` rounds of raw then Tether, interleaved (raw, Tether, raw,
/// Tether…), each timed by the wall clock and by this process's CPU time (`getrusage`, user + system, every
/// thread: the in-process server's work is counted, and it is the same for both variants).
enum SideBySide {
    static func measure(_ body: () async throws -> Void) async throws -> SideBySideResult.Sample {
        let cpuStart = rusageCPUSeconds()
        let start = now()
        try await body()
        let wall = now() - start
        return SideBySideResult.Sample(wall: wall, cpu: rusageCPUSeconds() - cpuStart)
    }

    static func run(_ row: SideBySideRow, rounds: Int) async throws -> SideBySideResult {
        print("\n### \(row.number). \(row.name) (raw: \(row.rawName))")
        var result = SideBySideResult(row: row)
        for round in 1...rounds {
            let raw = try await measure(row.raw)
            result.raw.append(raw)
            let tether = try await measure(row.tether)
            result.tether.append(tether)
            print(
                String(
                    format: "  round %d: raw %.3f s (CPU %.3f s), Tether %.3f s (CPU %.3f s): wall %.2f×, CPU %.2f×",
                    round,
                    raw.wall,
                    raw.cpu,
                    tether.wall,
                    tether.cpu,
                    raw.wall / tether.wall,
                    raw.cpu / tether.cpu
                )
            )
            fflush(nil)
        }
        print(SideBySideResult.header)
        print(result.tableLine)
        fflush(nil)  // when stdout is a file, a crash in a later row must not take this row's lines with it
        return result
    }

    /// Runs `rows` and prints the table of all of them at the end.
    static func run(_ title: String, rows: [SideBySideRow], rounds: Int) async throws {
        print("\n## \(title): \(rounds) rounds per row, raw and Tether interleaved, both ends in this process")
        var results: [SideBySideResult] = []
        for row in rows {
            results.append(try await run(row, rounds: rounds))
        }
        print("\n\(title): medians over \(rounds) rounds; ratios are paired medians of raw / Tether")
        print(SideBySideResult.header)
        for result in results { print(result.tableLine) }
    }
}
