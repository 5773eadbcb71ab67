import Foundation
import NIOConcurrencyHelpers

/// `EventLog.wait` gave up: the condition did not hold within its time.
struct EventWaitTimedOut<Event>: Error, CustomStringConvertible {
    // Sendable: the events are only read for the message.
    nonisolated(unsafe) var events: [Event]
    /// What the recorder knows beyond the events (the errors behind them, in full).
    var details: [String] = []
    var description: String {
        "timed out waiting; events so far: \(events)" + details.map { "\n  \($0)" }.joined()
    }
}

/// What a test delegate saw, in order, and a way for the test to await a condition on it (no sleeps: the waiter
/// resumes when the event that satisfies it is appended).
final class EventLog<Event>: @unchecked Sendable {
    // Sendable: `recorded` and `waiters` are only touched under `lock`.
    private let lock = NIOLock()
    private var recorded: [Event] = []
    private var waiters: [UUID: (condition: ([Event]) -> Bool, continuation: CheckedContinuation<Void, any Error>)] =
        [:]

    /// Every event so far.
    var events: [Event] { lock.withLock { recorded } }

    /// Appends `event`; `beforeResuming` runs after it is recorded and before any waiter it satisfies resumes.
    func append(_ event: Event, beforeResuming: () -> Void = {}) {
        let ready: [CheckedContinuation<Void, any Error>] = lock.withLock {
            recorded.append(event)
            let due = waiters.filter { $0.value.condition(recorded) }
            for key in due.keys { waiters.removeValue(forKey: key) }
            return due.map(\.value.continuation)
        }
        beforeResuming()
        for continuation in ready { continuation.resume() }
    }

    /// Waits until `condition` holds for the events; throws ``EventWaitTimedOut`` after `timeout`.
    @discardableResult
    func wait(timeout: Duration, until condition: @escaping @Sendable ([Event]) -> Bool) async throws -> [Event] {
        let id = UUID()
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let waiter = lock.withLock { waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: EventWaitTimedOut(events: events))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let satisfied = lock.withLock { () -> Bool in
                if condition(recorded) { return true }
                waiters[id] = (condition, continuation)
                return false
            }
            if satisfied { continuation.resume() }
        }
        return events
    }
}
