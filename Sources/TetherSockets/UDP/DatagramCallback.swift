import Foundation

/// The two callbacks of the delegate face that every datagram makes, carried as values rather than closures: handed
/// to the delegate queue, the dispatched block is their only allocation; run on the loop, they allocate nothing.
enum DatagramCallback {
    /// `udpSocket(_:didSendDataWithTag:)`.
    case sent(tag: Int)
    /// `udpSocket(_:didReceive:fromAddress:withFilterContext:)`.
    case received(Data, from: Data, context: Any?)

    /// Calls the delegate.
    func run(_ socket: GCDAsyncUdpSocket, _ delegate: any GCDAsyncUdpSocketDelegate) {
        switch self {
        case .sent(let tag):
            delegate.udpSocket(socket, didSendDataWithTag: tag)
        case .received(let data, let from, let context):
            delegate.udpSocket(socket, didReceive: data, fromAddress: from, withFilterContext: context)
        }
    }
}
