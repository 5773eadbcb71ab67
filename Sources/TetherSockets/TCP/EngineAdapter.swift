import DequeModule
import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import TetherConcurrency

/// Connects one life of an ``GCDAsyncSocket`` to its engine: receives the engine's events on the event loop and turns
/// them into delegate callbacks. The engine holds it until the connection closes; it holds the socket weakly, as the
/// original's sources did: the user's last reference going away closes the connection (``GCDAsyncSocket``'s
/// `deinit`), and the engine then has nobody left to call.
final class EngineAdapter: SocketEngineOwner {
    weak var socket: GCDAsyncSocket?
    let life: UInt64
    /// Only the connecting side reports `didConnect`; accepted sockets never do.
    let reportsConnect: Bool
    private(set) var engineBox: SocketEngine?
    var connector: TCPConnector?
    let eventLoop: any EventLoop

    init(socket: GCDAsyncSocket, life: UInt64, eventLoop: any EventLoop, reportsConnect: Bool) {
        self.socket = socket
        self.life = life
        self.eventLoop = eventLoop
        self.reportsConnect = reportsConnect
    }

    func attach(_ engine: SocketEngine) {
        engineBox = engine
    }

    /// Runs `body` with the engine on its event loop (inline when already there), after every operation handed over
    /// from another thread before it: operations run in the order they were issued, whichever thread issued them.
    func withEngine(_ body: @escaping (SocketEngine) -> Void) {
        if eventLoop.inEventLoop {
            if inbox.withLock({ !$0.operations.isEmpty }) { runInbox() }
            if let engine = engineBox { body(engine) }
            return
        }
        // Operations from other threads join an inbox; one loop task runs every operation queued by then, in
        // order. A delegate queue that issues several writes in a row wakes the loop once, not once per write.
        let schedules = inbox.withLock { inbox -> Bool in
            inbox.operations.append(body)
            inbox.unfinished += 1
            if inbox.isScheduled { return false }
            inbox.isScheduled = true
            return true
        }
        guard schedules else { return }
        // Sendable: the adapter is used on its event loop only, where the inbox runs.
        let adapter = UncheckedSendableBox(self)
        eventLoop.execute { adapter.value.runInbox() }
    }

    /// On the event loop: runs `body` with the engine now, after the operations handed over before it, and returns
    /// true; elsewhere returns false without running it (then hand it over with ``withEngine(_:)``). The body is not
    /// kept, so an operation issued on the loop (a callback in event-loop delivery) allocates no closure.
    func runOnLoopNow(_ body: (SocketEngine) -> Void) -> Bool {
        guard eventLoop.inEventLoop else { return false }
        if inbox.withLock({ !$0.operations.isEmpty }) { runInbox() }
        if let engine = engineBox { body(engine) }
        return true
    }

    /// Whether operations handed over from other threads have not finished running on the loop (a read served from
    /// the buffer off the loop must not overtake them). True from the hand-over until the operation has returned:
    /// an operation taken out of the inbox but still running counts, or a read issued after it could complete first.
    var hasPendingOperations: Bool {
        inbox.withLock { $0.unfinished > 0 }
    }

    /// Operations handed over from other threads, not yet run on the loop.
    private struct Inbox {
        var operations: Deque<(SocketEngine) -> Void> = []
        /// Operations handed over and not yet returned: those waiting in `operations` and those being run.
        var unfinished = 0
        var isScheduled = false

        /// The next operation to run (`finished`: the one taken before has returned); nil when none waits, and the
        /// next hand-over schedules a run again.
        mutating func next(finished: Bool) -> ((SocketEngine) -> Void)? {
            if finished { unfinished -= 1 }
            guard let operation = operations.popFirst() else {
                isScheduled = false
                return nil
            }
            return operation
        }
    }

    private let inbox = LockedBox(Inbox())

    /// Runs the inbox's operations one at a time, in order, until it is empty. One taken at a time: an operation
    /// whose callback (event-loop delivery) issues another inline runs the rest of the inbox first, through
    /// ``withEngine(_:)``, and this loop then finds it empty.
    private func runInbox() {
        var operation = inbox.withLock { $0.next(finished: false) }
        while let current = operation {
            if let engine = engineBox { current(engine) }
            operation = inbox.withLock { $0.next(finished: true) }
        }
        // A peer's close that waited for these operations is decided now (RunLoop face).
        if let engine = engineBox, engine.policy.closesAtEndOfStreamWithUnreadBytes { engine.processReads() }
    }

    func engineDidActivate(_ engine: SocketEngine) {
        guard let socket else { return }
        let channel = engine.context?.channel
        let (url, proxied): (URL?, ProxyTarget?) = socket.state.withLock { s in
            guard s.lifecycle.isCurrent(life: life) else { return (nil, nil) }
            if let channel {
                s.channel = channel
                s.remoteAddress = channel.remoteAddress
                s.localAddress = channel.localAddress
            }
            _ = s.lifecycle.connectionEstablished(life: life)
            return (s.connectedURL, s.proxiedTarget)
        }
        socket.logger?.debug(
            "connected",
            metadata: ["remote": "\(channel?.remoteAddress.map { "\($0)" } ?? "?")", "accepted": "\(!reportsConnect)"]
        )
        guard reportsConnect else { return }
        if let url {
            socket.deliver(life: life) { sock, delegate in delegate.socket(sock, didConnectTo: url) }
        } else if let proxied {
            let port = UInt16(proxied.port)
            socket.deliver(life: life) { sock, delegate in
                delegate.socket(sock, didConnectToHost: proxied.host, port: port)
            }
        } else if let remote = channel?.remoteAddress {
            let host = remote.numericHost ?? ""
            let port = UInt16(remote.port ?? 0)
            socket.deliver(life: life) { sock, delegate in delegate.socket(sock, didConnectToHost: host, port: port) }
        }
    }

    func engine(_ engine: SocketEngine, didRead bytes: ByteBuffer, tag: Int, destination: CallerBuffer?) {
        guard let socket else { return }
        socket.logger?.trace("read", metadata: ["tag": "\(tag)", "bytes": "\(bytes.readableBytes)"])
        // The delivered read owns its bytes: taken here, on the loop, before the engine's buffer takes more.
        let data = bytes.deliveredData
        if let delegate = socket.inlineDelegate(life: life) {
            delegate.socket(socket, didRead: destination?.store(data) ?? data, withTag: tag)
            return
        }
        socket.deliver(life: life) { sock, delegate in
            delegate.socket(sock, didRead: destination?.store(data) ?? data, withTag: tag)
        }
    }

    func engine(_ engine: SocketEngine, didReadPartialDataOfLength length: Int, tag: Int) {
        guard let socket else { return }
        socket.deliver(life: life) { sock, delegate in
            delegate.socket(sock, didReadPartialDataOfLength: UInt(length), tag: tag)
        }
    }

    func engine(_ engine: SocketEngine, didWriteDataWithTag tag: Int) {
        guard let socket else { return }
        socket.logger?.trace("wrote", metadata: ["tag": "\(tag)"])
        if let delegate = socket.inlineDelegate(life: life) {
            delegate.socket(socket, didWriteDataWithTag: tag)
            return
        }
        socket.deliver(life: life) { sock, delegate in delegate.socket(sock, didWriteDataWithTag: tag) }
    }

    func engine(_ engine: SocketEngine, didWritePartialDataOfLength length: Int, tag: Int) {
        guard let socket else { return }
        socket.deliver(life: life) { sock, delegate in
            delegate.socket(sock, didWritePartialDataOfLength: UInt(length), tag: tag)
        }
    }

    func engine(
        _ engine: SocketEngine,
        shouldTimeout kind: SocketEngine.OperationKind,
        tag: Int,
        elapsed: TimeAmount,
        bytesDone: Int,
        respond: @escaping (TimeAmount) -> Void
    ) {
        guard let socket else { return respond(.zero) }
        let seconds = Double(elapsed.nanoseconds) / 1e9
        socket.logger?.debug(
            "\(kind) timed out; asking the delegate",
            metadata: ["tag": "\(tag)", "elapsed": "\(seconds)"]
        )
        let loop = eventLoop
        // Sendable: `respond` touches the engine; it is called on the event loop only (hopping there if needed).
        let reply = UncheckedSendableBox(respond)
        let asked = socket.deliver(life: life) { sock, delegate in
            let forward: @Sendable (TimeInterval) -> Void = { answer in
                let extensionTime = TimeoutValue.extensionTime(answer)
                if loop.inEventLoop {
                    reply.value(extensionTime)
                } else {
                    loop.execute { reply.value(extensionTime) }
                }
            }
            if let asker = delegate as? any TimeoutAnsweringLater {
                asker.socket(
                    sock,
                    shouldTimeout: kind,
                    tag: tag,
                    elapsed: seconds,
                    bytesDone: UInt(bytesDone),
                    answer: forward
                )
                return
            }
            let answer: TimeInterval
            switch kind {
            case .read:
                answer = delegate.socket(
                    sock,
                    shouldTimeoutReadWithTag: tag,
                    elapsed: seconds,
                    bytesDone: UInt(bytesDone)
                )
            case .write:
                answer = delegate.socket(
                    sock,
                    shouldTimeoutWriteWithTag: tag,
                    elapsed: seconds,
                    bytesDone: UInt(bytesDone)
                )
            }
            forward(answer)
        }
        if !asked { respond(.zero) }
    }

    func engineReadStreamDidClose(_ engine: SocketEngine) {
        guard let socket else { return }
        socket.logger?.debug("read stream closed by the peer")
        socket.deliver(life: life) { sock, delegate in delegate.socketDidCloseReadStream(sock) }
    }

    func engineDidSecure(_ engine: SocketEngine, negotiatedProtocol: String?) {
        guard let socket else { return }
        socket.state.withLock { s in
            guard s.lifecycle.isCurrent(life: life) else { return }
            s.isSecure = true
            s.negotiatedProtocol = negotiatedProtocol
        }
        socket.logger?.debug("secured", metadata: ["alpn": "\(negotiatedProtocol ?? "none")"])
        socket.deliver(life: life) { sock, delegate in delegate.socketDidSecure(sock) }
    }

    func engine(_ engine: SocketEngine, didReceive trust: TLSPeerTrust, answer: @escaping @Sendable (Bool) -> Void) {
        guard let socket else { return answer(false) }
        let asked = socket.deliver(life: life) { sock, delegate in
            delegate.socket(sock, didReceive: trust, completionHandler: answer)
        }
        if !asked { answer(false) }
    }

    func engineDidClose(_ engine: SocketEngine, error: GCDAsyncSocketError?) {
        connector?.cancel(with: error ?? .closedLocally)
        connector = nil
        socket?.lifeEnded(life, error: error)
        engineBox = nil
    }

    /// The socket was released (its `deinit`): the connection closes on the loop, with nobody left to tell. Always a
    /// task of its own, never inline: the release may happen inside one of the engine's own callbacks.
    func socketReleased() {
        // Sendable: the adapter is used on its event loop only, where this task runs.
        let adapter = UncheckedSendableBox(self)
        eventLoop.execute {
            adapter.value.withEngine { engine in engine.close(error: nil) }
        }
    }
}

@available(*, unavailable)
extension EngineAdapter: Sendable {}
