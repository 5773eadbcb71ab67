import NIOCore
import TetherConcurrency

extension AsyncUdpSocket {
    // MARK: closing

    /// Closes at once: ``isClosed()`` is true when this returns, queued sends and receive requests are dropped without
    /// callbacks (and callbacks not yet performed are dropped too), and
    /// ``AsyncUdpSocketDelegate/onUdpSocketDidClose(_:)`` follows on a later pass of the socket's run loop. The
    /// socket cannot be used again: bind, connect and join throw, sends return false, receives are ignored.
    ///
    /// Δ: a second `close…` does nothing (the original posted a second DidClose); DidClose is performed on the
    /// socket's run loop (the original: the calling thread's).
    public func close() {
        let timers = state.withLock { s -> [Scheduled<Void>]? in
            guard !s.isClosed else { return nil }
            s.isClosed = true
            s.closeAfter = []
            s.pendingSends = 0
            s.receives.removeAll()
            defer { s.timers = [:] }
            return Array(s.timers.values)
        }
        guard let timers else { return }
        for timer in timers { timer.cancel() }
        core.close()
        mailbox.post { [weak self] in
            guard let self else { return }
            self.delegate?.onUdpSocketDidClose(self)
        }
    }

    /// Closes once every queued send has been reported (`didSendDataWithTag`/`didNotSendDataWithTag`); receive
    /// requests are dropped then. From this call on, sends return false and receives are ignored. With nothing to send
    /// it closes on a later pass of the run loop. Does nothing on a closed socket.
    public func closeAfterSending() {
        closeAfter(.sending)
    }

    /// Closes once every queued receive request has completed or timed out; queued sends are dropped then. From this
    /// call on, sends return false and receives are ignored. Does nothing on a closed socket.
    public func closeAfterReceiving() {
        closeAfter(.receiving)
    }

    /// Closes once both the sends and the receive requests queued now are done. From this call on, sends return false
    /// and receives are ignored. Does nothing on a closed socket.
    public func closeAfterSendingAndReceiving() {
        closeAfter([.sending, .receiving])
    }

    private func closeAfter(_ queues: CloseAfter) {
        let drained = state.withLock { s -> Bool in
            guard !s.isClosed else { return false }
            s.closeAfter.formUnion(queues)
            return Self.isDrained(s)
        }
        // The original defers this close to a later pass of the run loop.
        if drained { post { sock in sock.close() } }
    }

    /// On the run loop, after a send result or a receive request ended: closes when a `closeAfter…` waits for
    /// nothing more.
    func closeIfDrained() {
        if state.withLock({ !$0.isClosed && Self.isDrained($0) }) { close() }
    }

    private static func isDrained(_ s: State) -> Bool {
        guard !s.closeAfter.isEmpty else { return false }
        if s.closeAfter.contains(.sending), s.pendingSends > 0 { return false }
        if s.closeAfter.contains(.receiving), !s.receives.isDrained { return false }
        return true
    }
}
