import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TetherConcurrency

/// Holds the connector of a pending connect for its cancellation handler.
final class ConnectorSlot: Sendable {
    private let value = LockedBox<NIOLoopBound<TCPConnector>?>(nil)
    func set(_ connector: NIOLoopBound<TCPConnector>) { value.withLock { $0 = connector } }
    func get() -> NIOLoopBound<TCPConnector>? { value.withLock { $0 } }
}
