public import Foundation

/// The callbacks of an ``GCDAsyncSocket``, all optional, as CocoaAsyncSocket's `GCDAsyncSocketDelegate`.
///
/// With the default ``GCDAsyncSocket/CallbackDelivery/delegateQueue`` delivery every callback is dispatched
/// asynchronously onto the socket's `delegateQueue`, in the order the socket produced them, never concurrently for
/// one socket. The delegate is held weakly by the socket and captured when a callback is enqueued.
public protocol GCDAsyncSocketDelegate: AnyObject {
    /// A listening socket accepted a connection. `newSocket` is connected, has this delegate and queue, and lives
    /// until it closes (keep a reference to talk to it).
    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket)
    /// An outbound TCP connection is established; `host` is the peer's numeric IP.
    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16)
    /// An outbound unix-domain connection is established.
    func socket(_ sock: GCDAsyncSocket, didConnectTo url: URL)
    /// A queued read completed.
    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int)
    /// A length or separator read made progress without completing; `partialLength` is this pass's increment.
    func socket(_ sock: GCDAsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int)
    /// A write completed: every byte was handed to the kernel (or the TLS layer).
    func socket(_ sock: GCDAsyncSocket, didWriteDataWithTag tag: Int)
    /// A write made progress without completing; `partialLength` is this pass's increment.
    func socket(_ sock: GCDAsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int)
    /// A read timed out. Return a positive interval to extend it by that much, or ≤ 0 to close the socket with
    /// ``GCDAsyncSocketError/Code/readTimeout``. `elapsed` is the original timeout plus all extensions.
    func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    )
        -> TimeInterval
    /// A write timed out; as ``socket(_:shouldTimeoutReadWithTag:elapsed:bytesDone:)``.
    func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeoutWriteWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    )
        -> TimeInterval
    /// The peer closed its side while ``GCDAsyncSocket/autoDisconnectOnClosedReadStream`` is false; writes go on.
    func socketDidCloseReadStream(_ sock: GCDAsyncSocket)
    /// The socket closed: exactly once per started life. `nil` after `disconnect()`/`disconnectAfter…`, else an
    /// ``GCDAsyncSocketError`` carrying the undelivered bytes and the tags of the dropped operations.
    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?)
    /// The TLS handshake finished.
    func socketDidSecure(_ sock: GCDAsyncSocket)
    /// Manual trust evaluation (``TLSSettings/manuallyEvaluatesTrust``): a client is asked about the server's
    /// chain, a server about a client certificate. Call `completionHandler` once, from any thread, at any time:
    /// `true` continues the handshake, `false` closes with "Peer certificate rejected" (domain `.tls`). Later
    /// calls are ignored.
    func socket(
        _ sock: GCDAsyncSocket,
        didReceive trust: TLSPeerTrust,
        completionHandler: @escaping @Sendable (Bool) -> Void
    )
    /// Tether addition: the connect failed, the connection never came up. Called just before
    /// ``socketDidDisconnect(_:withError:)``, which follows with the same error, as the original calls it.
    func socket(_ sock: GCDAsyncSocket, didNotConnect error: any Error)
    /// Tether addition: the idle detector (``GCDAsyncSocket/idleTimeouts``) found the connection idle.
    func socket(_ sock: GCDAsyncSocket, didBecomeIdle event: IdleStateEvent)
}

extension GCDAsyncSocketDelegate {
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {}
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {}
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didConnectTo url: URL) {}
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {}
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {}
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didWriteDataWithTag tag: Int) {}
    /// Does nothing.
    public func socket(_ sock: GCDAsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {}
    /// Returns 0: the read times out.
    public func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    ) -> TimeInterval { 0 }
    /// Returns 0: the write times out.
    public func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeoutWriteWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    ) -> TimeInterval { 0 }
    /// Does nothing.
    public func socketDidCloseReadStream(_ sock: GCDAsyncSocket) {}
    /// Does nothing.
    public func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {}
    /// Does nothing.
    public func socketDidSecure(_ sock: GCDAsyncSocket) {}
    /// Answers `false`: the peer is refused.
    public func socket(
        _ sock: GCDAsyncSocket,
        didReceive trust: TLSPeerTrust,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) { completionHandler(false) }
}
