import Foundation
import NIOCore

extension UDPLife {
    /// Hands one of the machine's deliveries to the socket's delegate.
    func deliver(_ delivery: UDPStateMachine.Delivery) {
        switch delivery {
        case .connected(let address):
            socket?.connectFinished(life: life, address: address)
            let data = address.sockaddrData
            socket?.deliver(life: life) { sock, delegate in delegate.udpSocket(sock, didConnectToAddress: data) }
            fastPath.packetFinished()
        case .notConnected(let error):
            socket?.connectFinished(life: life, address: nil)
            socket?.deliver(life: life) { sock, delegate in delegate.udpSocket(sock, didNotConnect: error) }
            fastPath.packetFinished()
        case .sent(let tag):
            socket?.deliverSent(life: life, tag: tag)
            fastPath.packetFinished()
        case .notSent(let tag, let error):
            socket?.deliver(life: life) { sock, delegate in
                delegate.udpSocket(sock, didNotSendDataWithTag: tag, dueToError: error)
            }
            fastPath.packetFinished()
        case .received(let data, let address, let context):
            socket?.deliver(life: life, .received(data, from: senderData(address), context: context))
        }
    }
}
