import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import TetherConcurrency

extension CallerBuffer {
    /// Writes `bytes` at the offset (growing the buffer as needed) and returns them.
    func store(_ bytes: Data) -> Data {
        let count = bytes.count
        if data.length < offset + count {
            data.length = offset + count
        }
        if count > 0 {
            bytes.withUnsafeBytes { raw in
                data.mutableBytes.advanced(by: offset).copyMemory(from: raw.baseAddress!, byteCount: count)
            }
        }
        return bytes
    }
}

extension GCDAsyncSocket {
    /// Hands a callback to the delegate of life `life`: dispatched onto the delegate queue under the state lock (so
    /// that callbacks keep the order in which they were produced, and none follows `socketDidDisconnect`), or run
    /// inline in event-loop delivery. Returns false when nobody was there to call.
    @discardableResult
    func deliver(life: UInt64, _ callback: @escaping (GCDAsyncSocket, any GCDAsyncSocketDelegate) -> Void) -> Bool {
        let (delivered, inline): (Bool, (any GCDAsyncSocketDelegate)?) = state.withLock { s in
            guard s.lifecycle.isCurrent(life: life), let delegate = s.delegate else { return (false, nil) }
            switch s.delivery {
            case .delegateQueue:
                guard let queue = s.delegateQueue else { return (false, nil) }
                // Sendable: the delegate and the callback are used on the delegate queue only, after this hand-over.
                let target = UncheckedSendableBox(delegate)
                let work = UncheckedSendableBox(callback)
                queue.async {
                    work.value(self, target.value)
                }
                return (true, nil)
            case .eventLoop:
                return (true, delegate)
            }
        }
        if let inline { callback(self, inline) }
        return delivered
    }

    /// The delegate to call inline, on the loop, for life `life`: in event-loop delivery while the life is current;
    /// nil otherwise (then ``deliver(life:_:)`` hands the callback over). Calling it directly spares the closure that
    /// a hand-over needs.
    func inlineDelegate(life: UInt64) -> (any GCDAsyncSocketDelegate)? {
        state.withLock { s in
            guard s.delivery == .eventLoop, s.lifecycle.isCurrent(life: life) else { return nil }
            return s.delegate
        }
    }

    /// Ends life `life` with `error`: exactly one `socketDidDisconnect` per life.
    func lifeEnded(_ life: UInt64, error: GCDAsyncSocketError?) {
        let (ended, listeners): (Bool, [any Channel]) = state.withLock { s in
            guard s.lifecycle.ended(life: life) else { return (false, []) }
            if let error, error.disconnection == .notConnected { enqueueDidNotConnect(&s, error: error) }
            enqueueDisconnectCallback(&s, error: error)
            return (true, clearLife(&s))
        }
        if ended {
            if let error {
                logger?.debug("disconnected", metadata: ["error": "\(error)"])
            } else {
                logger?.debug("disconnected on request")
            }
        }
        for listener in listeners { listener.close(promise: nil) }
    }

    /// Under the lock: queues `socketDidDisconnect` after every callback queued so far.
    func enqueueDisconnectCallback(_ s: inout State, error: GCDAsyncSocketError?) {
        guard let delegate = s.delegate else { return }
        // Sendable: the delegate is called on its queue (or the loop) only, after this hand-over.
        let target = UncheckedSendableBox(delegate)
        switch s.delivery {
        case .delegateQueue:
            guard let queue = s.delegateQueue else { return }
            queue.async {
                target.value.socketDidDisconnect(self, withError: error)
            }
        case .eventLoop:
            let loop =
                s.channel?.eventLoop ?? s.adapter?.eventLoop ?? s.listenerLoop
                ?? eventLoopGroup.next()
            loop.execute {
                target.value.socketDidDisconnect(self, withError: error)
            }
        }
    }

    /// Under the lock: forgets the runtime state of the life that ended (configuration stays).
    func clearLife(_ s: inout State) -> [any Channel] {
        let listeners = s.listeners
        s.adapter = nil
        s.channel = nil
        s.remoteAddress = nil
        s.localAddress = nil
        s.connectedURL = nil
        s.listeners = []
        s.listenerLoop = nil
        s.listenerAddresses = []
        s.listenerPath = nil
        s.isSecure = false
        s.negotiatedProtocol = nil
        s.tlsRequested = false
        s.connectHost = nil
        s.proxiedTarget = nil
        s.machine = nil
        return listeners
    }
}
