import Foundation

/// Per-load bookkeeping shared by the steps of one run (only touched from the load's task).
// Sendable: its mutable flags are only touched from the load's task, one step at a time.
final class LoadContext: @unchecked Sendable {
    let watchdog: IdleWatchdog?
    /// Set when the observer collects metrics (``LoadObserver/collectsMetrics``): nothing is recorded otherwise.
    let metrics: MetricsRecorder?
    var didDeliverResponse = false
    var didUseBodyStream = false

    init(watchdog: IdleWatchdog?, collectsMetrics: Bool) {
        self.watchdog = watchdog
        self.metrics = collectsMetrics ? MetricsRecorder() : nil
    }

    /// Runs `body` with the idle timer paused: waiting for the delegate is not the server's silence.
    func paused<Result>(_ body: () async -> Result) async -> Result {
        self.watchdog?.pause()
        defer { self.watchdog?.resume() }
        return await body()
    }

    func pausedThrowing<Result>(_ body: () async throws -> Result) async throws -> Result {
        self.watchdog?.pause()
        defer { self.watchdog?.resume() }
        return try await body()
    }
}
