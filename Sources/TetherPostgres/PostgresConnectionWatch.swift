import PostgresNIO
import TetherConcurrency

/// Tells the call running on a connection of a pool when that connection closes.
///
/// A pooled connection serves many calls one after the other, and a future cannot forget a callback: each connection
/// gets one callback on its `closeFuture`, for its whole life, which hands the close to the call that runs on it then
/// (if any).
final class PostgresConnectionWatch: Sendable {
    private struct Entry {
        /// The call running on the connection, and what to do when the connection closes under it.
        var owner: ObjectIdentifier?
        var onClose: (@Sendable () -> Void)?
    }

    private let entries = LockedBox<[PostgresConnection.ID: Entry]>([:])

    /// Calls `onClose` (on an event loop, or at once) if `connection` closes before ``unwatch(_:owner:)``.
    /// - Parameters:
    ///   - connection: The connection the call runs on.
    ///   - owner: The call.
    ///   - onClose: What to do when it closes.
    func watch(_ connection: PostgresConnection, owner: ObjectIdentifier, onClose: @escaping @Sendable () -> Void) {
        let isNew = entries.withLock { entries -> Bool in
            let isNew = entries[connection.id] == nil
            entries[connection.id] = Entry(owner: owner, onClose: onClose)
            return isNew
        }
        if isNew {
            let id = connection.id
            connection.closeFuture.whenComplete { _ in self.closed(id) }
        }
    }

    /// Stops telling `owner` about `connection`'s close (another call may be watching it by now: it keeps its watch).
    /// - Parameters:
    ///   - connection: The connection.
    ///   - owner: The call that no longer runs on it.
    func unwatch(_ connection: PostgresConnection, owner: ObjectIdentifier) {
        entries.withLock { entries in
            if entries[connection.id]?.owner == owner {
                entries[connection.id] = Entry()
            }
        }
    }

    private func closed(_ id: PostgresConnection.ID) {
        let entry = entries.withLock { $0.removeValue(forKey: id) }
        entry?.onClose?()
    }
}
