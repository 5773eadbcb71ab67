public import Dispatch
public import Foundation
import Logging
import NIOCore
import TetherConcurrency

extension GCDAsyncUdpSocket {
    // MARK: sending

    /// Sends on a connected socket; the result arrives as `didSendDataWithTag`/`didNotSendDataWithTag`.
    /// Empty data is ignored.
    /// - Parameters:
    ///   - data: one datagram.
    ///   - timeout: seconds a send may wait for buffer space; negative = no timeout.
    ///   - tag: your number for the callbacks.
    public func send(_ data: Data, withTimeout timeout: TimeInterval, tag: Int) {
        enqueueSend(data, destination: nil, timeout: timeout, tag: tag)
    }

    /// Sends to `host` (resolved for this datagram) on an unconnected socket.
    public func send(_ data: Data, toHost host: String, port: UInt16, withTimeout timeout: TimeInterval, tag: Int) {
        guard !data.isEmpty else { return }
        guard !host.isEmpty else {
            reportUnsent(tag: tag, error: .badParam("Invalid host parameter (empty)"))
            return
        }
        enqueueSend(data, destination: .host(host, port: Int(port)), timeout: timeout, tag: tag)
    }

    /// Sends to `sockaddr` bytes on an unconnected socket.
    public func send(_ data: Data, toAddress remoteAddr: Data, withTimeout timeout: TimeInterval, tag: Int) {
        guard !data.isEmpty else { return }
        guard let address = SocketAddress(sockaddrData: remoteAddr) else {
            reportUnsent(tag: tag, error: .badParam("A valid IPv4 or IPv6 address was not given"))
            return
        }
        enqueueSend(data, destination: .address(address), timeout: timeout, tag: tag)
    }

    /// Sets a filter every outgoing datagram passes (asynchronously on `filterQueue`); nil removes it.
    public func setSendFilter(_ filterBlock: GCDAsyncUdpSocketSendFilterBlock?, with filterQueue: DispatchQueue?) {
        setSendFilter(filterBlock, with: filterQueue, isAsynchronous: true)
    }

    /// Sets a send filter; `isAsynchronous: false` runs it synchronously (keep it tiny).
    public func setSendFilter(
        _ filterBlock: GCDAsyncUdpSocketSendFilterBlock?,
        with filterQueue: DispatchQueue?,
        isAsynchronous: Bool
    ) {
        state.withLock { s in
            s.sendFilter = filterBlock.map { SendFilter(block: $0, queue: filterQueue, isAsynchronous: isAsynchronous) }
        }
    }

    /// Sends in the current life (started if needed). With `closes`, only if `close()` was called that many times
    /// exactly (else the send is dropped, as a queued send is by `close()`).
    private func enqueueSend(
        _ data: Data,
        destination: UDPDestination?,
        timeout: TimeInterval,
        tag: Int,
        closes expected: UInt64? = nil
    ) {
        guard !data.isEmpty else { return }
        // Once more for each life that ends between taking it and handing the send to it.
        while true {
            let runtime: UDPLife
            do {
                guard
                    let started = try state.withLock({ s -> UDPLife? in
                        if let expected, s.closes != expected { return nil }
                        return try ensureStarted(&s)
                    })
                else { return }
                runtime = started
            } catch {
                reportUnsent(tag: tag, error: .wrapping(error, function: "socket"))
                return
            }
            // Straight to the kernel when the life's queue is idle and nothing (a filter, a lookup) must run first;
            // the callback is queued as the loop's would be.
            // The kernel taking it is noted in the life's ledger in the same step, so a `close()` overtaking this
            // thread still reports it.
            // Under the socket's lock, the send and the posting of its result are one step: a reply the loop receives
            // meanwhile is posted after it, so `didSend` comes before the callback of its echo.
            let ledger = runtime.sentLedger
            let life = runtime.life
            let direct = state.withLock { s -> UDPDirectSendOutcome? in
                guard s.sendFilter == nil,
                    let result = runtime.fastPath.send(data, to: destination, whenTaken: { ledger.noteSent(tag) })
                else { return nil }
                switch result {
                case .sent:
                    return .sent(post(&s, life: life, .sent(tag: tag)))
                case .failed(let error):
                    let callback: (GCDAsyncUdpSocket, any GCDAsyncUdpSocketDelegate) -> Void = { sock, delegate in
                        delegate.udpSocket(sock, didNotSendDataWithTag: tag, dueToError: error)
                    }
                    guard s.sockets?.life == life, let runNow = enqueue(&s, runNowOnLoop: true, callback).runNow else {
                        return .failed(nil)
                    }
                    return .failed((runNow.0, { callback(self, runNow.1) }))
                }
            }
            switch direct {
            case nil:
                break
            case .sent(let runNow):
                if let (callbacks, delegate) = runNow { run(.sent(tag: tag), on: callbacks, delegate) }
                return
            case .failed(let runNow):
                if let (callbacks, body) = runNow { callbacks.run(body) }
                return
            }
            let outgoing = UDPOutgoing(data: data, destination: destination, timeout: timeout, tag: tag)
            if hand(.send(outgoing), to: runtime, closes: expected) { return }
        }
    }

    /// Hands `packet` to `runtime` if it is still the current life; false when that life ended meanwhile (the caller
    /// starts over in the next one). Under the lock, so that packets reach a life's loop in the order they were
    /// asked for and before the life's end; every life of a socket runs on the same loop, so a packet that an
    /// ended life hands back (`closes` given: ``sendAgain(_:endedLife:closes:)``, on the loop) is fed to the next
    /// life at once, ahead of every packet asked for after it (queued behind the task running it).
    func hand(_ packet: UDPSendQueue.Packet, to runtime: UDPLife, closes expected: UInt64?) -> Bool {
        let now = expected != nil && runtime.loop.inEventLoop
        let handed: UInt64? = state.withLock { s in
            guard s.sockets?.life == runtime.life else { return nil }
            if now {
                runtime.announceHandedBack()
            } else {
                runtime.enqueue(packet, closes: s.closes)
            }
            return s.closes
        }
        guard let closes = handed else { return false }
        if now { runtime.feedHandedBack(packet, closes: closes) }
        return true
    }

    /// A send that reached life `life` after it ended (asked for while `closeAfterSending` emptied the queue): sent
    /// in a new life, as the original's next send opened new sockets, ahead of the sends asked for after it;
    /// reported not sent (`.closed`) if that life is somehow still current. Dropped without a callback when a
    /// `close()` came after it was asked for (`closes` is the count then): that close drops it, as it drops queued
    /// sends.
    func sendAgain(_ outgoing: UDPOutgoing, endedLife life: UInt64, closes: UInt64) {
        if state.withLock({ $0.sockets?.life == life }) {
            deliver(life: life) { sock, delegate in
                delegate.udpSocket(
                    sock,
                    didNotSendDataWithTag: outgoing.tag,
                    dueToError: GCDAsyncUdpSocketError(code: .closed, message: "Socket closed")
                )
            }
            return
        }
        enqueueSend(
            outgoing.data,
            destination: outgoing.destination,
            timeout: outgoing.timeout,
            tag: outgoing.tag,
            closes: closes
        )
    }

    private func reportUnsent(tag: Int, error: GCDAsyncUdpSocketError) {
        let life = state.withLock { $0.sockets?.life ?? $0.lives }
        deliver(life: life, evenWhenClosed: true) { sock, delegate in
            delegate.udpSocket(sock, didNotSendDataWithTag: tag, dueToError: error)
        }
    }

    // MARK: receiving

    /// Delivers one datagram, then stops.
    /// - Throws: `.badConfig` "Must bind socket before you can receive data." before sockets exist.
    public func receiveOnce() throws {
        try startReceiving(.once)
    }

    /// Delivers every datagram until ``pauseReceiving()`` or close.
    /// - Throws: as ``receiveOnce()``.
    public func beginReceiving() throws {
        try startReceiving(.continuous)
    }

    /// Stops reading; callbacks already queued still run.
    public func pauseReceiving() {
        let runtime = state.withLock { $0.sockets?.runtime }
        runtime?.setReceiveMode(.off)
    }

    /// Sets a filter every received datagram passes (asynchronously on `filterQueue`); nil removes it.
    public func setReceiveFilter(_ filterBlock: GCDAsyncUdpSocketReceiveFilterBlock?, with filterQueue: DispatchQueue?)
    {
        setReceiveFilter(filterBlock, with: filterQueue, isAsynchronous: true)
    }

    /// Sets a receive filter; `isAsynchronous: false` runs it synchronously from the engine (keep it tiny).
    public func setReceiveFilter(
        _ filterBlock: GCDAsyncUdpSocketReceiveFilterBlock?,
        with filterQueue: DispatchQueue?,
        isAsynchronous: Bool
    ) {
        state.withLock { s in
            s.receiveFilter = filterBlock.map {
                ReceiveFilter(block: $0, queue: filterQueue, isAsynchronous: isAsynchronous)
            }
        }
    }

    private func startReceiving(_ mode: ReceiveMode) throws {
        let runtime: UDPLife = try state.withLock { s in
            try check(.receive, s)
            return try ensureStarted(&s)
        }
        runtime.setReceiveMode(mode)
    }

    // MARK: delivery

    /// Dispatches a callback onto the delegate queue under the state lock, so callbacks keep their order and none
    /// follows `udpSocketDidClose`. Callbacks of an ended life are dropped. In event-loop delivery the callback goes
    /// to the life's ``UDPLoopCallbacks`` (run at once when produced on the loop, executed there otherwise).
    @discardableResult
    func deliver(
        life: UInt64,
        evenWhenClosed: Bool = false,
        _ callback: @escaping (GCDAsyncUdpSocket, any GCDAsyncUdpSocketDelegate) -> Void
    ) -> Bool {
        typealias Outcome = (delivered: Bool, runNow: (UDPLoopCallbacks, any GCDAsyncUdpSocketDelegate)?)
        let (delivered, runNow) = state.withLock { s -> Outcome in
            let current = s.sockets?.life == life || (evenWhenClosed && s.sockets == nil)
            guard current else { return (false, nil) }
            return enqueue(&s, runNowOnLoop: true, callback)
        }
        if let (callbacks, delegate) = runNow {
            callbacks.run { callback(self, delegate) }
        }
        return delivered
    }

    /// Reports one datagram of `tag` that the kernel took: its `didSendDataWithTag`, unless the life ended (its
    /// close reported every datagram the kernel had taken, from the life's ``UDPSentLedger``).
    func deliverSent(life: UInt64, tag: Int) {
        deliver(life: life, .sent(tag: tag))
    }

    /// Under the lock: queues `callback` for the current life (or, with no sockets, as the configuration says).
    /// With `runNowOnLoop`, a callback produced on the life's loop in event-loop delivery is returned to be run at
    /// once, after the lock is released.
    @discardableResult
    private func enqueue(
        _ s: inout State,
        runNowOnLoop: Bool,
        _ callback: @escaping (GCDAsyncUdpSocket, any GCDAsyncUdpSocketDelegate) -> Void
    ) -> (delivered: Bool, runNow: (UDPLoopCallbacks, any GCDAsyncUdpSocketDelegate)?) {
        guard let delegate = s.delegate else { return (false, nil) }
        switch s.sockets?.delivery ?? s.configuration.callbackDelivery {
        case .delegateQueue:
            guard let queue = s.delegateQueue else { return (false, nil) }
            mailbox.post(.call(callback, delegate), on: queue, for: self)
            return (true, nil)
        case .eventLoop:
            let callbacks = s.sockets?.callbacks ?? UDPLoopCallbacks(loop: eventLoopGroup.next())
            if runNowOnLoop, callbacks.loop.inEventLoop {
                callbacks.takeInbox()
                return (true, (callbacks, delegate))
            }
            // Sendable: the delegate and the callback are used on the life's loop only.
            let target = UncheckedSendableBox(delegate)
            let work = UncheckedSendableBox(callback)
            callbacks.post { work.value(self, target.value) }
            return (true, nil)
        }
    }

    /// Under the lock: queues `udpSocketDidClose` after every callback queued so far (in event-loop delivery,
    /// executed on the loop: the lock is held).
    func enqueueDidClose(_ s: inout State, error: (any Error)?) {
        guard let delegate = s.delegate else { return }
        switch s.sockets?.delivery ?? s.configuration.callbackDelivery {
        case .delegateQueue:
            guard let queue = s.delegateQueue else { return }
            mailbox.post(.call({ $1.udpSocketDidClose($0, withError: error) }, delegate), on: queue, for: self)
        case .eventLoop:
            // Sendable: the delegate and the error are used on the life's loop only.
            let target = UncheckedSendableBox(delegate)
            let failure = UncheckedSendableBox(error)
            let callbacks = s.sockets?.callbacks ?? UDPLoopCallbacks(loop: eventLoopGroup.next())
            callbacks.post { target.value.udpSocketDidClose(self, withError: failure.value) }
        }
    }

    /// Ends life `life` (a fatal channel error, or close after sending), or the current life (nil: `close()`): one
    /// `udpSocketDidClose`.
    func lifeEnded(_ life: UInt64?, error: (any Error)?) {
        let ended: (Sockets, [EventLoopPromise<Void>])? = state.withLock { s in
            if life == nil { s.closes &+= 1 }
            guard let sockets = s.sockets, life == nil || sockets.life == life else { return nil }
            // No datagram of this life leaves from now on; each one the kernel took is reported sent before the
            // close, even when its report was still on its way (the send ran on the loop or another thread).
            let stopped = sockets.runtime?.stopSending() ?? (sent: [], neverSent: [])
            for tag in stopped.sent {
                enqueue(&s, runNowOnLoop: false) { sock, delegate in delegate.udpSocket(sock, didSendDataWithTag: tag) }
            }
            enqueueDidClose(&s, error: error)
            s.sockets = nil
            return (sockets, stopped.neverSent)
        }
        if let (sockets, neverSent) = ended {
            for promise in neverSent { promise.fail(ChannelError.ioOnClosedChannel) }
            Self.release(sockets)
            logger?.debug("closed", metadata: ["error": "\(error.map { "\($0)" } ?? "none")"])
        }
    }

    /// Records the connected peer (on success) and ends the connecting phase.
    func connectFinished(life: UInt64, address: SocketAddress?) {
        state.withLock { s in
            guard s.sockets?.life == life else { return }
            s.sockets?.isConnecting = false
            if let address {
                s.sockets?.connectedAddress = address
                if address.protocol == .inet { closeFamily(&s, .inet6) } else { closeFamily(&s, .inet) }
            }
        }
    }
}
