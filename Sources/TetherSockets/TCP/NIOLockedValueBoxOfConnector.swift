import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Holds the connector of a pending connect for its cancellation handler.
final class NIOLockedValueBoxOfConnector: Sendable {
    private let value = NIOLockedValueBox<NIOLoopBound<TCPConnector>?>(nil)
    func set(_ connector: NIOLoopBound<TCPConnector>) { value.withLockedValue { $0 = connector } }
    func get() -> NIOLoopBound<TCPConnector>? { value.withLockedValue { $0 } }
}
