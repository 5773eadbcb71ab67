import Foundation
import NIOCore
import TetherConcurrency

extension GCDAsyncUdpSocket {
    /// Hands a datagram's callback to the delegate of life `life`, as ``deliver(life:evenWhenClosed:_:)`` does (in
    /// order, none after `udpSocketDidClose`, dropped for an ended life) without a closure of its own (through the
    /// socket's ``UDPDelegateMailbox`` for the delegate queue). For `.sent`,
    /// the datagram is first taken off the life's ``UDPSentLedger`` (its close reports the ones still on it).
    func deliver(life: UInt64, _ callback: DatagramCallback) {
        let runNow = state.withLock { s -> (UDPLoopCallbacks, any GCDAsyncUdpSocketDelegate)? in
            guard let sockets = s.sockets, sockets.life == life else { return nil }
            if case .sent(let tag) = callback { sockets.runtime?.sentLedger.takeOne(tag) }
            guard let delegate = s.delegate else { return nil }
            switch sockets.delivery {
            case .delegateQueue:
                guard let queue = s.delegateQueue else { return nil }
                mailbox.post(.datagram(callback, delegate), on: queue, for: self)
                return nil
            case .eventLoop:
                let callbacks = sockets.callbacks
                if callbacks.loop.inEventLoop { return (callbacks, delegate) }
                // Sendable: the delegate and the callback are used on the life's loop only.
                let target = UncheckedSendableBox(delegate)
                let work = UncheckedSendableBox(callback)
                callbacks.loop.execute { callbacks.run { work.value.run(self, target.value) } }
                return nil
            }
        }
        guard let (callbacks, delegate) = runNow else { return }
        if !callbacks.runInline({ callback.run(self, delegate) }) {
            callbacks.run { callback.run(self, delegate) }
        }
    }
}
