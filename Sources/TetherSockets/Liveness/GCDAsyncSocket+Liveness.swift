import Dispatch
import Logging
import NIOCore
import TetherConcurrency

/// Liveness on the GCD face (Tether additions): keepalive, the idle detector, the heartbeat, and the
/// `didNotConnect` callback. Each setting takes effect for the next `connect`/`accept` and, on a started socket, at
/// once; sockets accepted by a listener start with the listener's settings.
extension GCDAsyncSocket {
    /// TCP keepalive and user timeout. Default ``TCPKeepalive/off``, as the original.
    ///
    /// A connection that keepalive finds dead closes through `socketDidDisconnect` with `ETIMEDOUT` (code `.other`,
    /// domain `.posix`).
    public var keepalive: TCPKeepalive {
        get { state.withLock { $0.configuration.liveness.keepalive } }
        set { updateLiveness { $0.keepalive = newValue } }
    }

    /// When the delegate hears ``GCDAsyncSocketDelegate/socket(_:didBecomeIdle:)``. Default ``IdleTimeouts/none``.
    public var idleTimeouts: IdleTimeouts {
        get { state.withLock { $0.configuration.liveness.idle } }
        set { updateLiveness { $0.idle = newValue } }
    }

    /// The heartbeat: a ping after write-idle time, and a close with ``GCDAsyncSocketError/Code/heartbeatTimeout``
    /// when no reply follows in time. Default nil (none).
    public var heartbeat: Heartbeat? {
        get { state.withLock { $0.configuration.liveness.heartbeat } }
        set { updateLiveness { $0.heartbeat = newValue } }
    }

    /// Tells the heartbeat that the reply to its ping arrived (with ``Heartbeat/Reply/confirmedByApplication``;
    /// with ``Heartbeat/Reply/anyBytes`` any received byte already counts). Ignored when no ping is out.
    public func heartbeatReplyReceived() {
        state.withLock { $0.adapter }?.withEngine { $0.livenessReplyConfirmed() }
    }

    func updateLiveness(_ change: (inout LivenessSettings) -> Void) {
        let (settings, adapter) = state.withLock { s -> (LivenessSettings, EngineAdapter?) in
            change(&s.configuration.liveness)
            return (s.configuration.liveness, s.adapter)
        }
        // The values were checked when they were made: only a socket that is not TCP refuses them, and it is left
        // alone.
        adapter?.withEngine { engine in try? engine.configureLiveness(settings) }
    }

    /// Under the lock: queues `didNotConnect` where `socketDidDisconnect` is about to be queued, just before it.
    func enqueueDidNotConnect(_ s: inout State, error: GCDAsyncSocketError) {
        guard let delegate = s.delegate else { return }
        // Sendable: the delegate is called on its queue (or the loop) only, after this hand-over.
        let target = UncheckedSendableBox(delegate)
        switch s.delivery {
        case .delegateQueue:
            guard let queue = s.delegateQueue else { return }
            queue.async { target.value.socket(self, didNotConnect: error) }
        case .eventLoop:
            let loop = s.channel?.eventLoop ?? s.adapter?.eventLoop ?? eventLoopGroup.next()
            loop.execute { target.value.socket(self, didNotConnect: error) }
        }
    }
}

extension EngineAdapter {
    func engine(_ engine: SocketEngine, didBecomeIdle event: IdleStateEvent) {
        guard let socket else { return }
        socket.logger?.debug("idle", metadata: ["event": "\(event)"])
        socket.deliver(life: life) { sock, delegate in delegate.socket(sock, didBecomeIdle: event) }
    }
}
