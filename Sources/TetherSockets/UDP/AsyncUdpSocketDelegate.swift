public import Foundation

/// The callbacks of an ``AsyncUdpSocket``, all optional, called on the socket's delegate queue in the order the
/// events happened. `udpSocketDidClose(_:withError:)` is the last callback of a socket's life.
public protocol AsyncUdpSocketDelegate: AnyObject {
    /// `connect` succeeded; `address` is the peer's `sockaddr` bytes.
    func udpSocket(_ sock: AsyncUdpSocket, didConnectToAddress address: Data)
    /// `connect` failed (DNS, no usable family, the system call).
    func udpSocket(_ sock: AsyncUdpSocket, didNotConnect error: (any Error)?)
    /// The datagram with `tag` was handed to the kernel (or dropped by the send filter).
    func udpSocket(_ sock: AsyncUdpSocket, didSendDataWithTag tag: Int)
    /// The datagram with `tag` was not sent; the socket stays open.
    func udpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?)
    /// A datagram arrived from `address` (`sockaddr` bytes); `filterContext` is what the receive filter set.
    func udpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    )
    /// The socket closed: `nil` after ``AsyncUdpSocket/close()`` or ``AsyncUdpSocket/closeAfterSending()``.
    func udpSocketDidClose(_ sock: AsyncUdpSocket, withError error: (any Error)?)
}

extension AsyncUdpSocketDelegate {
    /// Does nothing.
    public func udpSocket(_ sock: AsyncUdpSocket, didConnectToAddress address: Data) {}
    /// Does nothing.
    public func udpSocket(_ sock: AsyncUdpSocket, didNotConnect error: (any Error)?) {}
    /// Does nothing.
    public func udpSocket(_ sock: AsyncUdpSocket, didSendDataWithTag tag: Int) {}
    /// Does nothing.
    public func udpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {}
    /// Does nothing.
    public func udpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {}
    /// Does nothing.
    public func udpSocketDidClose(_ sock: AsyncUdpSocket, withError error: (any Error)?) {}
}
