import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TetherConcurrency

/// The id of an operation, set on the event loop and read by its cancellation handler (also on the event loop;
/// the lock makes the hand-over between the two closures safe). A cancellation that arrives before the operation
/// reached the engine marks it, so that the operation fails at once instead of waiting.
final class OperationID: Sendable {
    private struct State {
        var id: UInt64?
        var cancelled = false
    }

    private let state = LockedBox(State())

    func set(_ id: UInt64) { state.withLock { $0.id = id } }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Marks the operation cancelled; returns its id when it already reached the engine.
    func cancel() -> UInt64? {
        state.withLock {
            $0.cancelled = true
            return $0.id
        }
    }
}
