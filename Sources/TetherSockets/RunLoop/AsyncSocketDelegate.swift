public import Foundation

/// The callbacks of a RunLoop-era ``AsyncSocket``, as the original's informal protocol: every method is optional
/// (default implementations do nothing, answer true, nil or 0). They run on the socket's run loop, in its modes, in
/// the order the socket produced them; `onSocketWillConnect` runs inside `connect` on the calling thread, and
/// `onSocketDidDisconnect` inside `disconnect` when that is called on the socket's run loop thread.
public protocol AsyncSocketDelegate: AnyObject {
    /// The socket is closing because of `err` (nil: the peer closed cleanly). ``AsyncSocket/unreadData()`` returns
    /// the bytes received and not read, during this call only. `onSocketDidDisconnect` follows.
    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?)
    /// The socket closed (after any close: error, peer, or local). It may be connected again from here.
    func onSocketDidDisconnect(_ sock: AsyncSocket)
    /// A listening socket accepted a connection; keep `newSocket` (nothing else does).
    func onSocket(_ sock: AsyncSocket, didAcceptNewSocket newSocket: AsyncSocket)
    /// The run loop the accepted socket's callbacks go to; nil (default): the listener's thread's run loop.
    func onSocket(_ sock: AsyncSocket, wantsRunLoopForNewSocket newSocket: AsyncSocket) -> RunLoop?
    /// Asked before a connection starts (inside `connect`, or for an accepted socket on the listener's run loop);
    /// false vetoes it. Default true.
    func onSocketWillConnect(_ sock: AsyncSocket) -> Bool
    /// The connection is established; `host` is the peer's numeric IP.
    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16)
    /// A read completed.
    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int)
    /// A length or separator read made progress (this pass's byte count) without completing.
    func onSocket(_ sock: AsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int)
    /// A write completed.
    func onSocket(_ sock: AsyncSocket, didWriteDataWithTag tag: Int)
    /// A write made progress without completing.
    func onSocket(_ sock: AsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int)
    /// A read timed out: a positive answer extends it by that many seconds (asked again at the next expiry);
    /// 0 (default) or less closes the socket with ``AsyncSocketError/Code/readTimeoutError``.
    func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    )
        -> TimeInterval
    /// A write timed out: as the read question, closing with ``AsyncSocketError/Code/writeTimeoutError``.
    func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutWriteWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    ) -> TimeInterval
    /// The TLS handshake asked by `startTLS` completed; later reads and writes are encrypted.
    func onSocketDidSecure(_ sock: AsyncSocket)
    /// Tether addition: the connect failed, the connection never came up. Called first, then
    /// ``onSocket(_:willDisconnectWithError:)`` with the same error and ``onSocketDidDisconnect(_:)``, as the
    /// original calls them.
    func onSocket(_ sock: AsyncSocket, didNotConnect err: any Error)
    /// Tether addition: the idle detector (``AsyncSocket/idleTimeouts``) found the connection idle.
    func onSocket(_ sock: AsyncSocket, didBecomeIdle event: IdleStateEvent)
}

extension AsyncSocketDelegate {
    /// Does nothing.
    public func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {}
    /// Does nothing.
    public func onSocketDidDisconnect(_ sock: AsyncSocket) {}
    /// Does nothing (the new socket is then released and closes).
    public func onSocket(_ sock: AsyncSocket, didAcceptNewSocket newSocket: AsyncSocket) {}
    /// nil: the listener's thread's run loop.
    public func onSocket(_ sock: AsyncSocket, wantsRunLoopForNewSocket newSocket: AsyncSocket) -> RunLoop? { nil }
    /// true.
    public func onSocketWillConnect(_ sock: AsyncSocket) -> Bool { true }
    /// Does nothing.
    public func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {}
    /// Does nothing.
    public func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {}
    /// Does nothing.
    public func onSocket(_ sock: AsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {}
    /// Does nothing.
    public func onSocket(_ sock: AsyncSocket, didWriteDataWithTag tag: Int) {}
    /// Does nothing.
    public func onSocket(_ sock: AsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {}
    /// 0: the read times out.
    public func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    ) -> TimeInterval { 0 }
    /// 0: the write times out.
    public func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutWriteWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    ) -> TimeInterval { 0 }
    /// Does nothing.
    public func onSocketDidSecure(_ sock: AsyncSocket) {}
}
