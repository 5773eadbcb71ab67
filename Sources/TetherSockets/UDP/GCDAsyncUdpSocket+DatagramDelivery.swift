import Foundation
import NIOCore
import TetherConcurrency

extension GCDAsyncUdpSocket {
    /// Hands a datagram's callback to the delegate of life `life`, as ``deliver(life:evenWhenClosed:_:)`` does (in
    /// order, none after `udpSocketDidClose`, dropped for an ended life) without a closure of its own (through the
    /// socket's ``UDPDelegateMailbox`` for the delegate queue).
    func deliver(life: UInt64, _ callback: DatagramCallback) {
        let runNow = state.withLock { s in post(&s, life: life, callback) }
        guard let (callbacks, delegate) = runNow else { return }
        run(callback, on: callbacks, delegate)
    }

    /// Under the lock: posts a datagram's callback for life `life`. Produced on the life's loop in event-loop delivery,
    /// it is returned to be run once the lock is released (``run(_:on:_:)``), after what was posted before it.
    func post(
        _ s: inout State,
        life: UInt64,
        _ callback: DatagramCallback
    ) -> (UDPLoopCallbacks, any GCDAsyncUdpSocketDelegate)? {
        // The life's fields are read in place: a copy of `Sockets` would retain and release each of its references.
        guard s.sockets?.life == life else { return nil }
        if case .sent(let tag) = callback { s.sockets?.runtime?.sentLedger.takeOne(tag) }
        guard let delegate = s.delegate, let delivery = s.sockets?.delivery else { return nil }
        switch delivery {
        case .delegateQueue:
            guard let queue = s.delegateQueue else { return nil }
            mailbox.post(.datagram(callback, delegate), on: queue, for: self)
            return nil
        case .eventLoop:
            guard let callbacks = s.sockets?.callbacks else { return nil }
            if callbacks.loop.inEventLoop {
                callbacks.takeInbox()
                return (callbacks, delegate)
            }
            // Sendable: the delegate and the callback are used on the life's loop only.
            let target = UncheckedSendableBox(delegate)
            let work = UncheckedSendableBox(callback)
            callbacks.post { work.value.run(self, target.value) }
            return nil
        }
    }

    /// On the loop, after the lock: runs a callback ``post(_:life:_:)`` returned.
    func run(_ callback: DatagramCallback, on callbacks: UDPLoopCallbacks, _ delegate: any GCDAsyncUdpSocketDelegate) {
        if !callbacks.runInline({ callback.run(self, delegate) }) {
            callbacks.run { callback.run(self, delegate) }
        }
    }
}
