import NIOCore

/// The face a socket engine works for: it receives the engine's events on the event loop.
protocol SocketEngineOwner: AnyObject {
    /// The connection is established and the engine is serving its queues.
    func engineDidActivate(_ engine: SocketEngine)
    /// A delegate-face read completed.
    func engine(_ engine: SocketEngine, didRead bytes: ByteBuffer, tag: Int, destination: CallerBuffer?)
    /// A delegate-face length or separator read made progress without completing.
    func engine(_ engine: SocketEngine, didReadPartialDataOfLength length: Int, tag: Int)
    /// A delegate-face write completed.
    func engine(_ engine: SocketEngine, didWriteDataWithTag tag: Int)
    /// A delegate-face write made progress without completing.
    func engine(_ engine: SocketEngine, didWritePartialDataOfLength length: Int, tag: Int)
    /// A delegate-face read or write timed out: `respond` (on the event loop) with an extension, or ≤ 0 to close.
    func engine(
        _ engine: SocketEngine,
        shouldTimeout kind: SocketEngine.OperationKind,
        tag: Int,
        elapsed: TimeAmount,
        bytesDone: Int,
        respond: @escaping (TimeAmount) -> Void
    )
    /// The peer closed its side and the engine keeps the connection open for writing.
    func engineReadStreamDidClose(_ engine: SocketEngine)
    /// The TLS handshake finished (and pinning passed); `negotiatedProtocol` is the ALPN result.
    func engineDidSecure(_ engine: SocketEngine, negotiatedProtocol: String?)
    /// Manual trust evaluation: `answer` may be called from any thread, any time; the first answer counts.
    func engine(_ engine: SocketEngine, didReceive trust: TLSPeerTrust, answer: @escaping @Sendable (Bool) -> Void)
    /// The idle detector found the connection idle (``LivenessMachine``).
    func engine(_ engine: SocketEngine, didBecomeIdle event: IdleStateEvent)
    /// The connection ended; called exactly once per engine. `nil` for a local, requested close.
    func engineDidClose(_ engine: SocketEngine, error: GCDAsyncSocketError?)
    /// Operations handed over from other threads that have not run on the loop yet: a read among them may want the
    /// bytes the peer sent before its close.
    var hasPendingOperations: Bool { get }
}

extension SocketEngineOwner {
    /// None by default (a face whose operations reach the loop directly).
    var hasPendingOperations: Bool { false }

    /// Nobody to tell by default.
    func engine(_ engine: SocketEngine, didBecomeIdle event: IdleStateEvent) {}
}
