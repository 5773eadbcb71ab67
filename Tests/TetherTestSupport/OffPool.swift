import Foundation

/// Runs blocking work (a child's output read to its end, a blocking socket call, a fixture made with the `openssl`
/// CLI) on a thread of its own, off Swift's cooperative pool.
///
/// The pool has as many threads as cores (two here). Tests run in parallel on it: one test blocking a pool thread
/// halves everyone's progress, and two stall the whole run while the engines' timers keep running.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await handOff { deliver in
        Thread.detachNewThread { deliver(Result { try body() }) }
    }
}
