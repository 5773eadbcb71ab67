import CTetherAllocationCounter

/// What one variant allocated per operation: the fewest of several counted rounds, each of `iterations` calls of its
/// operation after a warm-up.
struct AllocationResult: Sendable, Codable {
    /// Allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc) per operation.
    var allocations: Double
    /// Frees per operation.
    var frees: Double
    /// Bytes asked for per operation.
    var bytes: Double
}

/// Counts what a workload allocates: counting is on only while a round of operations runs, on every thread.
enum AllocationMeter {
    /// Whether this process's allocator is the counting one (else every count would be zero).
    static var isInstalled: Bool { tether_allocation_counter_is_installed() != 0 }

    /// Prepares `workload`, runs its operation `warmUp` times uncounted (caches, pools and lazily made objects are
    /// made then), then `rounds` rounds of `iterations` counted calls, and returns the round with the fewest
    /// allocations divided by the operations it made.
    static func measure(
        _ workload: Workload,
        iterations: Int,
        warmUp: Int,
        rounds: Int
    ) async throws -> AllocationResult {
        let session = try await workload.prepare()
        for _ in 0..<warmUp { try await session.operation() }
        var best: tether_allocation_counts?
        for _ in 0..<rounds {
            tether_allocation_counting_start()
            var failure: (any Error)?
            for _ in 0..<iterations {
                do {
                    try await session.operation()
                } catch {
                    failure = error
                    break
                }
            }
            let counts = tether_allocation_counting_stop()
            if let failure { throw failure }
            if best.map({ counts.allocations < $0.allocations }) ?? true { best = counts }
        }
        try await session.end()
        let operations = Double(iterations * session.operationsPerCall)
        let counts = best ?? tether_allocation_counts()
        return AllocationResult(
            allocations: Double(counts.allocations) / operations,
            frees: Double(counts.frees) / operations,
            bytes: Double(counts.bytes) / operations
        )
    }
}
