import NIOCore
import TetherConcurrency
import TetherCore

/// The subscribers of one server: each gets every change as a frame addressed to it, in the order published.
final class NotesChangeHub: Sendable {
    private struct Subscriber {
        var destination: UInt16
        var source: UInt16
        var outbox: NotesOutbox
    }

    private let subscribers = LockedBox<[UInt64: Subscriber]>([:])

    /// The number of subscribed connections.
    var count: Int { subscribers.withLock { $0.count } }

    /// Adds connection `id`; its changes go to `outbox`, addressed `destination` from `source`.
    func subscribe(_ id: UInt64, destination: UInt16, source: UInt16, outbox: NotesOutbox) {
        subscribers.withLock { $0[id] = Subscriber(destination: destination, source: source, outbox: outbox) }
    }

    /// Removes connection `id`; false when it was not subscribed.
    @discardableResult
    func unsubscribe(_ id: UInt64) -> Bool {
        subscribers.withLock { $0.removeValue(forKey: id) } != nil
    }

    /// Ends every subscriber's outbox (their connections close after the frames already queued) and forgets them.
    func closeAll() {
        let all = subscribers.withLock {
            let all = Array($0.values)
            $0.removeAll()
            return all
        }
        for subscriber in all { subscriber.outbox.finish() }
    }

    /// Sends `change` to every subscriber (encoded once, and not at all when there is none).
    func publish(_ change: NoteChange) {
        guard let subscribers = subscribers.withLock({ $0.isEmpty ? nil : Array($0.values) }),
            let payload = try? NotesWireFormat.encode(.changed(change), requestID: 0)
        else { return }
        for subscriber in subscribers {
            subscriber.outbox.send(
                STXFrame(destination: subscriber.destination, source: subscriber.source, payload: payload)
            )
        }
    }
}
