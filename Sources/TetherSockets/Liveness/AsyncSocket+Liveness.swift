import Foundation
import TetherConcurrency

/// Liveness on the RunLoop face (Tether additions): keepalive, the idle detector, the heartbeat, and the
/// `didNotConnect` callback. Each setting takes effect for the next `connect`/`accept` and, on a started socket, at
/// once; sockets accepted by a listener start with the listener's settings.
extension AsyncSocket {
    /// TCP keepalive and user timeout. Default ``TCPKeepalive/off``, as the original.
    ///
    /// A connection that keepalive finds dead closes: `onSocket(_:willDisconnectWithError:)` with an
    /// `NSPOSIXErrorDomain` `ETIMEDOUT` error, then `onSocketDidDisconnect`.
    public var keepalive: TCPKeepalive {
        get { state.withLock { $0.liveness.keepalive } }
        set { updateLiveness { $0.keepalive = newValue } }
    }

    /// When the delegate hears ``AsyncSocketDelegate/onSocket(_:didBecomeIdle:)``. Default ``IdleTimeouts/none``.
    public var idleTimeouts: IdleTimeouts {
        get { state.withLock { $0.liveness.idle } }
        set { updateLiveness { $0.idle = newValue } }
    }

    /// The heartbeat: a ping after write-idle time, and a close with
    /// ``AsyncSocketError/Code/heartbeatTimeoutError`` when no reply follows in time. Default nil (none).
    public var heartbeat: Heartbeat? {
        get { state.withLock { $0.liveness.heartbeat } }
        set { updateLiveness { $0.heartbeat = newValue } }
    }

    /// Tells the heartbeat that the reply to its ping arrived (with ``Heartbeat/Reply/confirmedByApplication``).
    /// Ignored when no ping is out.
    public func heartbeatReplyReceived() {
        currentCore?.heartbeatReplyReceived()
    }

    private func updateLiveness(_ change: (inout LivenessSettings) -> Void) {
        let (settings, core) = state.withLock { s -> (LivenessSettings, GCDAsyncSocket?) in
            change(&s.liveness)
            return (s.liveness, s.core)
        }
        core?.updateLiveness { $0 = settings }
    }
}

extension RunLoopSocketBridge {
    func socket(_ sock: GCDAsyncSocket, didNotConnect error: any Error) {
        // The same translation `willDisconnectWithError` gets (a failed connect is never a clean close).
        let translated: any Error = (RunLoopErrorMapping.willDisconnectError(for: error) ?? nil) ?? error
        post { self.current { socket, delegate in delegate.onSocket(socket, didNotConnect: translated) } }
    }

    func socket(_ sock: GCDAsyncSocket, didBecomeIdle event: IdleStateEvent) {
        post { self.current { socket, delegate in delegate.onSocket(socket, didBecomeIdle: event) } }
    }
}
