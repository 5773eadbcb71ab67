import Foundation

/// The notes soak's outcome: the counters, memory after warm-up, and the verdict.
struct NotesSoakReport {
    var counters: NotesSoakCounters
    var samples: [NotesSoakSample]
    var options: NotesSoakOptions

    /// The samples taken while writing, after warm-up (the first 20 %, and the baseline, left out).
    private var steady: [NotesSoakSample] {
        let writing = samples.dropFirst().dropLast()
        return Array(writing.dropFirst(writing.count / 5))
    }

    /// Live-heap growth after warm-up: the mean of the last 3 steady samples over the mean of the first 3. A leak
    /// shows here; the memory glibc's allocator keeps for reuse (per-thread arenas, fragments) does not.
    var growth: Double { Self.growth(of: steady.map { Double($0.heap) }) }

    /// Resident memory growth after warm-up, computed the same way (reported, not judged: it includes what the
    /// allocator keeps, which grows in steps as threads take new arenas).
    var residentGrowth: Double { Self.growth(of: steady.map { Double($0.resident) }) }

    private static func growth(of values: [Double]) -> Double {
        guard values.count >= 2 else { return 0 }
        let width = min(3, values.count / 2)
        let first = values.prefix(width).reduce(0, +) / Double(width)
        let last = values.suffix(width).reduce(0, +) / Double(width)
        return first > 0 ? last / first - 1 : 0
    }

    /// No violation, at least one restart when restarts were asked for, and live-heap growth under 5 %.
    var passed: Bool {
        counters.violationCount == 0 && counters.acknowledged > 0
            && (options.restartEvery == 0 || options.restartEvery >= options.duration - 5 || counters.restarts > 0)
            && growth < 0.05
    }

    func lines() -> [String] {
        let failures = counters.failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        let verdict = passed ? "PASS" : "FAIL"
        var lines: [String] = [""]
        lines.append(
            "notes soak: \(Int(options.duration)) s, \(options.users) users × \(options.writers) writers, 2 servers, "
                + "seed \(options.seed): \(verdict)"
        )
        lines.append("- requests acknowledged: \(counters.acknowledged); failed: " + failures.joined(separator: ", "))
        lines.append(
            "- outcomes settled by a list after a failure: \(counters.settledCommitted) committed, "
                + "\(counters.settledNotCommitted) not"
        )
        lines.append("- database restarts: \(counters.restarts); reconnections: \(counters.reconnections)")
        lines.append("- logins refused while the database was down: \(counters.refusedLogins)")
        lines.append("- change streams ended and watched again: \(counters.resubscriptions)")
        lines.append("- changes pushed to the watchers: \(counters.changesReceived)")
        lines.append("- violations: \(counters.violationCount)")
        lines += counters.violations.map { "  - \($0)" }
        if let first = steady.first, let last = samples.last {
            lines.append(
                String(
                    format: "- live heap after warm-up %.1f MiB, at the end %.1f MiB: growth %+.1f %%; resident memory "
                        + "%.1f MiB and %.1f MiB: growth %+.1f %%",
                    Double(first.heap) / 1_048_576,
                    Double(last.heap) / 1_048_576,
                    growth * 100,
                    Double(first.resident) / 1_048_576,
                    Double(last.resident) / 1_048_576,
                    residentGrowth * 100
                )
            )
            lines.append(
                "- descriptors \(samples.first?.descriptors ?? 0) at the start, \(first.descriptors) after warm-up, "
                    + "\(last.descriptors) at the end"
            )
        }
        return lines
    }
}
