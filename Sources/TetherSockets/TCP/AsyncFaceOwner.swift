import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TetherConcurrency

/// The async face needs no callbacks: results go straight to the awaiting tasks. It records the TLS outcome.
final class AsyncFaceOwner: SocketEngineOwner {
    struct Security {
        var isSecure = false
        var negotiatedProtocol: String?
    }

    let security = LockedBox(Security())
    /// Where idle events go (`TCPConnection.idleEvents(_:)`), until the connection ends.
    let idleEvents = LockedBox<AsyncStream<IdleStateEvent>.Continuation?>(nil)

    func engineDidSecure(_ engine: SocketEngine, negotiatedProtocol: String?) {
        security.withLock {
            $0.isSecure = true
            $0.negotiatedProtocol = negotiatedProtocol
        }
    }

    func engine(_ engine: SocketEngine, didReceive trust: TLSPeerTrust, answer: @escaping @Sendable (Bool) -> Void) {
        answer(false)
    }

    func engineDidActivate(_ engine: SocketEngine) {}
    func engine(_ engine: SocketEngine, didRead bytes: ByteBuffer, tag: Int, destination: CallerBuffer?) {}
    func engine(_ engine: SocketEngine, didReadPartialDataOfLength length: Int, tag: Int) {}
    func engine(_ engine: SocketEngine, didWriteDataWithTag tag: Int) {}
    func engine(_ engine: SocketEngine, didWritePartialDataOfLength length: Int, tag: Int) {}
    func engine(
        _ engine: SocketEngine,
        shouldTimeout kind: SocketEngine.OperationKind,
        tag: Int,
        elapsed: TimeAmount,
        bytesDone: Int,
        respond: @escaping (TimeAmount) -> Void
    ) { respond(.zero) }
    func engineReadStreamDidClose(_ engine: SocketEngine) {}
    func engineDidClose(_ engine: SocketEngine, error: GCDAsyncSocketError?) {
        idleEvents.withLock { $0?.finish() }
    }

    func engine(_ engine: SocketEngine, didBecomeIdle event: IdleStateEvent) {
        _ = idleEvents.withLock { $0?.yield(event) }
    }
}
