import Dispatch
import NIOCore
import TetherConcurrency

/// The delegate-queue side of ``GCDAsyncUdpSocket``: every callback for the delegate queue goes through one mailbox
/// per socket, in the order it was posted, and one block on the queue runs every callback posted until it finds the
/// mailbox empty.
///
/// A datagram's callbacks (`didSend`, `didReceive`) are carried as values, not closures, so that a busy socket pays
/// for a dispatched block and a wake of the queue's thread once per batch rather than once per callback.
///
/// The delegate queue may change while callbacks wait for the old one: those still run there, as the original's
/// already dispatched blocks did; a callback for the new queue posted meanwhile is dispatched on its own, so that
/// every callback runs on the queue that was the delegate queue when it was posted. Callbacks for one queue keep
/// their order.
final class UDPDelegateMailbox: Sendable {
    /// One callback.
    enum Item {
        /// A datagram's callback for `delegate`.
        case datagram(DatagramCallback, any GCDAsyncUdpSocketDelegate)
        /// Any other callback.
        case call((GCDAsyncUdpSocket, any GCDAsyncUdpSocketDelegate) -> Void, any GCDAsyncUdpSocketDelegate)

        func run(_ socket: GCDAsyncUdpSocket) {
            switch self {
            case .datagram(let callback, let delegate): callback.run(socket, delegate)
            case .call(let body, let delegate): body(socket, delegate)
            }
        }
    }

    private struct State {
        var items = CircularBuffer<Item>()
        /// The queue a drain was dispatched to and has not finished on; nil when none is.
        var queue: DispatchQueue?
    }

    private enum Posted {
        case queued
        case startDrain
        case dispatchAlone
    }

    // Sendable: the items (delegates, callbacks) are touched under the lock and run on their delegate queue only.
    private let state = UncheckedSendableBox(LockedBox(State()))

    /// Posts `item` for `queue`; from any thread, possibly under the socket's lock (the mailbox takes only its own).
    func post(_ item: Item, on queue: DispatchQueue, for socket: GCDAsyncUdpSocket) {
        let posted = state.value.withLock { s -> Posted in
            if let current = s.queue {
                guard current === queue else { return .dispatchAlone }
                s.items.append(item)
                return .queued
            }
            s.queue = queue
            s.items.append(item)
            return .startDrain
        }
        switch posted {
        case .queued:
            break
        case .startDrain:
            queue.async { self.drain(socket) }
        case .dispatchAlone:
            // Sendable: the item runs on `queue` only.
            let work = UncheckedSendableBox(item)
            queue.async { work.value.run(socket) }
        }
    }

    /// On the drain's queue: runs what is posted, in order, until nothing is left. It does not stop part way (to let
    /// other work on the queue run) so that a block queued after a callback was posted still runs after it, as when
    /// each callback was its own block.
    private func drain(_ socket: GCDAsyncUdpSocket) {
        while let next = state.value.withLock({ s -> Item? in
            if let item = s.items.popFirst() { return item }
            s.queue = nil
            return nil
        }) {
            next.run(socket)
        }
    }
}
