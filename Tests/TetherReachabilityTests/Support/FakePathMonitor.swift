import Foundation
import TetherConcurrency

@testable import TetherReachability

/// A back-end driven by the test: it reports `initialPath` inside `start` (like Tether's own back-ends), can fail
/// its first starts, and keeps its last handler after `stop` so a test can play a late report.
final class FakePathMonitor: NetworkPathErrorReporting {
    struct Failure: Error, Equatable {}

    private struct State {
        var handler: (@Sendable (NetworkPath) -> Void)?
        var errorHandler: (@Sendable (any Error) -> Void)?
        var initialPath: NetworkPath?
        var failuresLeft: Int
        var starts = 0
        var stops = 0
    }

    private let state: LockedBox<State>
    /// The number of each start, as it happens (to wait for retries).
    let starts = Recorder<Int>()

    init(initialPath: NetworkPath? = nil, failingStarts: Int = 0) {
        state = LockedBox(State(initialPath: initialPath, failuresLeft: failingStarts))
    }

    var startCount: Int { state.withLock { $0.starts } }
    var stopCount: Int { state.withLock { $0.stops } }

    /// Changes what the next `start` reports.
    func setInitialPath(_ path: NetworkPath?) {
        state.withLock { $0.initialPath = path }
    }

    func start(_ handler: @escaping @Sendable (NetworkPath) -> Void) throws {
        try start(handler, errorHandler: { _ in })
    }

    func start(
        _ handler: @escaping @Sendable (NetworkPath) -> Void,
        errorHandler: @escaping @Sendable (any Error) -> Void
    ) throws {
        let initialPath = try state.withLock { state -> NetworkPath? in
            state.starts += 1
            starts.append(state.starts)
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                throw Failure()
            }
            state.handler = handler
            state.errorHandler = errorHandler
            return state.initialPath
        }
        if let initialPath {
            handler(initialPath)
        }
    }

    func stop() {
        state.withLock { $0.stops += 1 }
    }

    /// Reports `path` to the last handler given to `start` (even after `stop`, to play a late report).
    func report(_ path: NetworkPath) {
        state.withLock { $0.handler }?(path)
    }

    /// Reports a back-end failure after the start.
    func fail(_ error: any Error) {
        state.withLock { $0.errorHandler }?(error)
    }
}

/// Collects values from any thread and lets a test wait for them without sleeping.
final class Recorder<Value: Sendable> {
    private let condition = NSCondition()
    private var values: [Value] = []

    func append(_ value: Value) {
        condition.lock()
        values.append(value)
        condition.broadcast()
        condition.unlock()
    }

    var all: [Value] {
        condition.lock()
        defer { condition.unlock() }
        return values
    }

    /// Waits until `count` values arrived or `timeout` passed; returns what arrived.
    func wait(forCount count: Int, timeout: TimeInterval = 10) -> [Value] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while values.count < count, condition.wait(until: deadline) {}
        return values
    }
}

// Sendable: `values` is only read and changed while holding `condition`.
extension Recorder: @unchecked Sendable {}
