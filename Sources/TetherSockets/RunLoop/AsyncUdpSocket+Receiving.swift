public import Foundation
import NIOCore
import TetherConcurrency

extension AsyncUdpSocket {
    // MARK: receiving

    /// Queues a receive request. Requests are served one at a time, in order; a datagram is read only while one is
    /// active (until then datagrams wait), and offered to
    /// ``AsyncUdpSocketDelegate/onUdpSocket(_:didReceive:withTag:fromHost:port:)``: true takes it and completes the
    /// request; false discards it and keeps the request active, its timeout still running. On a connected socket,
    /// datagrams from other peers are skipped silently. Datagrams longer than ``maxReceiveBufferSize()`` are
    /// truncated; empty ones are delivered.
    ///
    /// Ignored on a closed socket and after a `closeAfter…`. On a socket that is neither bound nor has sent, nothing
    /// can arrive (it has no port): the request can only time out.
    /// - Parameters:
    ///   - timeout: seconds from the moment the request becomes active; negative: no timeout. On expiry:
    ///     `didNotReceiveDataWithTag` with ``AsyncUdpSocketError/Code/receiveTimeoutError`` (5), and the next request
    ///     becomes active; the socket stays open.
    ///   - tag: your number for the callbacks.
    public func receive(withTimeout timeout: TimeInterval, tag: Int) {
        let activated: AsyncUdpReceiveQueue.Request?? = state.withLock { s in
            guard !s.isClosed, s.closeAfter.isEmpty else { return nil }
            return .some(s.receives.enqueue(tag: tag, timeout: timeout))
        }
        guard let activated else { return }
        if let request = activated { armTimer(request) }
        driveReceives()
    }

    /// Asks the engine for one datagram when the active request needs one (and the socket has a port), and posts
    /// the offer of a datagram already read. Any thread.
    func driveReceives() {
        let (read, offer) = state.withLock { s -> (Bool, Bool) in
            guard !s.isClosed else { return (false, false) }
            let read = s.receives.needsRead && (s.didBind || s.didConnect)
            if read { s.receives.readStarted(true) }
            let offer = s.receives.hasOffer && !s.isOfferPosted
            if offer { s.isOfferPosted = true }
            return (read, offer)
        }
        if read {
            do {
                try core.receiveOnce()
            } catch {
                state.withLock { $0.receives.readStarted(false) }
            }
        }
        if offer {
            mailbox.post { [weak self] in self?.offerDatagrams() }
        }
    }

    /// From the core (its event loop): the datagram read for the active request.
    func datagramArrived(_ datagram: AsyncUdpReceiveQueue.Datagram) {
        let open = state.withLock { s -> Bool in
            guard !s.isClosed else { return false }
            s.receives.arrived(datagram)
            return true
        }
        if open { driveReceives() }
    }

    /// On the run loop: offers held datagrams to the delegate for the active request until one is taken or none is
    /// left, then asks for the next read.
    private func offerDatagrams() {
        state.withLock { $0.isOfferPosted = false }
        while true {
            let offer = state.withLock { s -> (AsyncUdpReceiveQueue.Request, AsyncUdpReceiveQueue.Datagram)? in
                guard !s.isClosed else { return nil }
                return s.receives.takeOffer()
            }
            guard let offer else { break }
            let (request, datagram) = offer
            let accepted =
                delegate?.onUdpSocket(
                    self,
                    didReceive: datagram.data,
                    withTag: request.tag,
                    fromHost: datagram.host,
                    port: datagram.port
                ) ?? true
            // The delegate may have closed the socket (then nothing is left to complete).
            let (completed, next) = state.withLock { s -> (Bool, AsyncUdpReceiveQueue.Request?) in
                guard !s.isClosed, accepted, s.receives.active?.id == request.id else { return (false, nil) }
                return (true, s.receives.answered(request.id, accepted: true))
            }
            guard completed else { continue }
            cancelTimer(request.id)
            if let next { armTimer(next) }
            closeIfDrained()
        }
        driveReceives()
    }

    /// Starts the active request's timeout (none for a negative one); it fires through the run loop.
    private func armTimer(_ request: AsyncUdpReceiveQueue.Request) {
        guard let delay = TimeoutValue.timeout(request.timeout) else { return }
        let id = request.id
        let task = timerLoop.scheduleTask(in: delay) { [weak self] () -> Void in
            self?.post { sock in sock.receiveTimedOut(id) }
        }
        let stale = state.withLock { s -> Bool in
            guard !s.isClosed, s.receives.active?.id == id else { return true }
            s.timers[id] = task
            return false
        }
        if stale { task.cancel() }
    }

    private func cancelTimer(_ id: UInt64) {
        state.withLock { $0.timers.removeValue(forKey: id) }?.cancel()
    }

    /// On the run loop: request `id`'s timeout (ignored when the request completed meanwhile).
    private func receiveTimedOut(_ id: UInt64) {
        let outcome = state.withLock { s -> (AsyncUdpReceiveQueue.Request, AsyncUdpReceiveQueue.Request?)? in
            s.timers[id] = nil
            return s.receives.timedOut(id).map { ($0.expired, $0.next) }
        }
        guard let outcome else { return }
        let (expired, next) = outcome
        if let next { armTimer(next) }
        delegate?.onUdpSocket(
            self,
            didNotReceiveDataWithTag: expired.tag,
            dueToError: AsyncUdpSocketError(.receiveTimeoutError)
        )
        closeIfDrained()
        driveReceives()
    }
}
