public import Foundation

/// The callbacks of an ``AsyncUdpSocket``, all optional (each has a default implementation), performed on the socket's
/// run loop, in its modes, in the order the events happened (the original's informal `AsyncUdpSocket` delegate).
///
/// No callback happens inside a call to the socket: sends and receives only queue work, and
/// ``onUdpSocketDidClose(_:)`` comes on a later pass of the run loop than the `close…` that caused it.
public protocol AsyncUdpSocketDelegate: AnyObject {
    /// The datagram queued with `tag` was handed to the kernel.
    func onUdpSocket(_ sock: AsyncUdpSocket, didSendDataWithTag tag: Int)

    /// The datagram queued with `tag` was not sent; the socket stays open.
    /// `error`: ``AsyncUdpSocketError`` ``AsyncUdpSocketError/Code/sendTimeoutError`` (4) on a timeout,
    ///   else the system call's error (`NSPOSIXErrorDomain` with the errno, e.g. `EMSGSIZE`, `ECONNREFUSED`).
    func onUdpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?)

    /// A datagram arrived for the active receive request (`tag`) from `host` (numeric) and `port`.
    /// Return true: the datagram is taken and the request completes; false: the datagram is discarded and the same
    ///   request stays active, its timeout still running, for the next datagram. The default returns true.
    func onUdpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        withTag tag: Int,
        fromHost host: String,
        port: UInt16
    ) -> Bool

    /// The active receive request (`tag`) ended without a datagram; the next request becomes active and the socket
    /// stays open.
    /// `error`: ``AsyncUdpSocketError`` ``AsyncUdpSocketError/Code/receiveTimeoutError`` (5).
    func onUdpSocket(_ sock: AsyncUdpSocket, didNotReceiveDataWithTag tag: Int, dueToError error: (any Error)?)

    /// The socket closed after ``AsyncUdpSocket/close()`` or one of the `closeAfter…` calls; never after an error,
    /// never on deinitialization. The socket's last callback.
    func onUdpSocketDidClose(_ sock: AsyncUdpSocket)
}

extension AsyncUdpSocketDelegate {
    /// Does nothing.
    public func onUdpSocket(_ sock: AsyncUdpSocket, didSendDataWithTag tag: Int) {}

    /// Does nothing.
    public func onUdpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {}

    /// Takes every datagram (returns true), as the original did for a delegate without the method.
    public func onUdpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        withTag tag: Int,
        fromHost host: String,
        port: UInt16
    ) -> Bool {
        true
    }

    /// Does nothing.
    public func onUdpSocket(_ sock: AsyncUdpSocket, didNotReceiveDataWithTag tag: Int, dueToError error: (any Error)?) {
    }

    /// Does nothing.
    public func onUdpSocketDidClose(_ sock: AsyncUdpSocket) {}
}
