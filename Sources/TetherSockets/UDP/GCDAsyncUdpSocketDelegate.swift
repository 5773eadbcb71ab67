public import Foundation

/// The callbacks of an ``GCDAsyncUdpSocket``, all optional, called on the socket's delegate queue in the order the
/// events happened. `udpSocketDidClose(_:withError:)` is the last callback of a socket's life.
public protocol GCDAsyncUdpSocketDelegate: AnyObject {
    /// `connect` succeeded; `address` is the peer's `sockaddr` bytes.
    func udpSocket(_ sock: GCDAsyncUdpSocket, didConnectToAddress address: Data)
    /// `connect` failed (DNS, no usable family, the system call).
    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotConnect error: (any Error)?)
    /// The datagram with `tag` was handed to the kernel (or dropped by the send filter).
    func udpSocket(_ sock: GCDAsyncUdpSocket, didSendDataWithTag tag: Int)
    /// The datagram with `tag` was not sent; the socket stays open.
    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?)
    /// A datagram arrived from `address` (`sockaddr` bytes); `filterContext` is what the receive filter set.
    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    )
    /// The socket closed: `nil` after ``GCDAsyncUdpSocket/close()`` or ``GCDAsyncUdpSocket/closeAfterSending()``.
    func udpSocketDidClose(_ sock: GCDAsyncUdpSocket, withError error: (any Error)?)
}

extension GCDAsyncUdpSocketDelegate {
    /// Does nothing.
    public func udpSocket(_ sock: GCDAsyncUdpSocket, didConnectToAddress address: Data) {}
    /// Does nothing.
    public func udpSocket(_ sock: GCDAsyncUdpSocket, didNotConnect error: (any Error)?) {}
    /// Does nothing.
    public func udpSocket(_ sock: GCDAsyncUdpSocket, didSendDataWithTag tag: Int) {}
    /// Does nothing.
    public func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {}
    /// Does nothing.
    public func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {}
    /// Does nothing.
    public func udpSocketDidClose(_ sock: GCDAsyncUdpSocket, withError error: (any Error)?) {}
}
