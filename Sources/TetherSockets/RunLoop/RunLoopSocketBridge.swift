import Foundation
import TetherConcurrency

/// The RunLoop-era face's adapter: the delegate of the engine face serving one life of an ``AsyncSocket``. It
/// receives the engine's events inline on the event loop (`.eventLoop` delivery, no hop) and posts each, translated
/// into the RunLoop era's callbacks, to the socket's run loop. A callback whose life has ended when it comes to run
/// is dropped.
final class RunLoopSocketBridge: GCDAsyncSocketDelegate, TimeoutAnsweringLater {
    /// How the server's chain is evaluated (the `startTLS` dictionary's keys), and why it was refused.
    struct TrustCheck {
        var evaluator: RunLoopTrustEvaluator?
        /// The SecureTransport code of the refusal, reported by the close.
        var rejection: Int?
    }

    private weak var owner: AsyncSocket?
    let generation: UInt64
    /// Set by `startTLS` under the owner's lock, read on the event loop when the engine asks about trust.
    private let trust = LockedBox(TrustCheck())
    var trustCheck: TrustCheck {
        get { trust.withLock { $0 } }
        set { trust.withLock { $0 = newValue } }
    }

    init(owner: AsyncSocket, generation: UInt64) {
        self.owner = owner
        self.generation = generation
    }

    /// Posts `callback` to run on the owner's run loop. Each callback posts one closure that calls ``current(_:)``
    /// with a body that is not kept (so not allocated).
    func post(_ callback: @escaping () -> Void) {
        owner?.mailbox.post(callback)
    }

    /// On the run loop: runs `body` with the owner and its delegate when this life is still the owner's current one.
    func current(_ body: (AsyncSocket, any AsyncSocketDelegate) -> Void) {
        guard let owner else { return }
        let generation = self.generation
        guard let delegate = owner.state.withLock({ $0.generation == generation ? $0.delegate : nil }) else { return }
        body(owner, delegate)
    }

    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        post {
            self.current { socket, delegate in
                socket.state.withLock { $0.phase = .connected }
                delegate.onSocket(socket, didConnectToHost: host, port: port)
            }
        }
    }

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        guard let owner else { return }
        let (delegate, modes) = (owner.delegate, owner.mailbox.modes)
        let accepted = AsyncSocket(accepted: newSocket, delegate: delegate, modes: modes, group: owner.eventLoopGroup)
        let host = newSocket.connectedHost ?? ""
        let port = newSocket.connectedPort
        post {
            self.current { listener, delegate in
                delegate.onSocket(listener, didAcceptNewSocket: accepted)
                let runLoop = delegate.onSocket(listener, wantsRunLoopForNewSocket: accepted) ?? RunLoop.current
                guard delegate.onSocketWillConnect(accepted) else {
                    accepted.disconnect()
                    return
                }
                accepted.mailbox.move(to: runLoop) { [weak accepted] in
                    guard let accepted, accepted.state.withLock({ $0.generation == 1 }) else { return }
                    accepted.delegate?.onSocket(accepted, didConnectToHost: host, port: port)
                }
            }
        }
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        post {
            self.current { socket, delegate in
                socket.state.withLock { $0.pendingReads = max($0.pendingReads - 1, 0) }
                delegate.onSocket(socket, didRead: data, withTag: tag)
            }
        }
    }

    func socket(_ sock: GCDAsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {
        post {
            self.current { socket, delegate in
                delegate.onSocket(socket, didReadPartialDataOfLength: partialLength, tag: tag)
            }
        }
    }

    func socket(_ sock: GCDAsyncSocket, didWriteDataWithTag tag: Int) {
        post {
            self.current { socket, delegate in
                socket.state.withLock { $0.pendingWrites = max($0.pendingWrites - 1, 0) }
                delegate.onSocket(socket, didWriteDataWithTag: tag)
            }
        }
    }

    func socket(_ sock: GCDAsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {
        post {
            self.current { socket, delegate in
                delegate.onSocket(socket, didWritePartialDataOfLength: partialLength, tag: tag)
            }
        }
    }

    func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeout kind: SocketEngine.OperationKind,
        tag: Int,
        elapsed: TimeInterval,
        bytesDone: UInt,
        answer: @escaping @Sendable (TimeInterval) -> Void
    ) {
        guard let owner else { return answer(0) }
        let generation = self.generation
        owner.mailbox.post { [weak owner] in
            guard let owner, owner.state.withLock({ $0.generation == generation }), let delegate = owner.delegate
            else { return answer(0) }
            switch kind {
            case .read:
                answer(delegate.onSocket(owner, shouldTimeoutReadWithTag: tag, elapsed: elapsed, bytesDone: bytesDone))
            case .write:
                answer(delegate.onSocket(owner, shouldTimeoutWriteWithTag: tag, elapsed: elapsed, bytesDone: bytesDone))
            }
        }
    }

    func socket(
        _ sock: GCDAsyncSocket,
        didReceive trust: TLSPeerTrust,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) {
        // Only the dictionary's evaluation asks (startTLS refuses manual trust otherwise).
        guard let evaluator = trustCheck.evaluator else { return completionHandler(false) }
        let box = self.trust
        Task {
            let rejection = await evaluator.evaluate(trust.peerCertificates)
            if let rejection { box.withLock { $0.rejection = rejection } }
            completionHandler(rejection == nil)
        }
    }

    func socketDidSecure(_ sock: GCDAsyncSocket) {
        post {
            self.current { socket, delegate in
                socket.state.withLock { s in
                    s.pendingReads = max(s.pendingReads - 1, 0)
                    s.pendingWrites = max(s.pendingWrites - 1, 0)
                }
                delegate.onSocketDidSecure(socket)
            }
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        let unread = (err as? GCDAsyncSocketError)?.unreadData
        var warning = RunLoopErrorMapping.willDisconnectError(for: err)
        if let code = trustCheck.rejection, let own = err as? GCDAsyncSocketError, own.domain == .tls {
            warning = .some(
                NSError(
                    domain: own.domain.rawValue,
                    code: code,
                    userInfo: [NSLocalizedDescriptionKey: own.message, NSUnderlyingErrorKey: own as NSError]
                )
            )
        }
        post {
            self.current { socket, delegate in
                socket.closed(by: warning, unreadData: unread, delegate: delegate)
            }
        }
    }
}

extension AsyncSocket {
    /// On the run loop: the engine ended the current life. `willDisconnect` (with the unread bytes readable during
    /// it) unless the close was asked for, then `onSocketDidDisconnect`.
    func closed(by warning: (any Error)??, unreadData: Data?, delegate: any AsyncSocketDelegate) {
        let generation: UInt64 = state.withLock { s in
            s.unreadData = unreadData ?? Data()
            return s.generation
        }
        if let warning {
            delegate.onSocket(self, willDisconnectWithError: warning)
        }
        let current: Bool = state.withLock { s in
            s.unreadData = nil
            guard s.generation == generation else { return false }
            s.phase = .idle
            s.generation &+= 1
            s.core = nil
            s.bridge = nil
            s.pendingReads = 0
            s.pendingWrites = 0
            return true
        }
        // A `disconnect()` inside willDisconnect already delivered onSocketDidDisconnect.
        if current { delegate.onSocketDidDisconnect(self) }
    }
}
