import Foundation
import NIOCore

extension UDPStateMachine {
    // MARK: receiving

    mutating func receiveAsked(_ mode: GCDAsyncUdpSocket.ReceiveMode) -> [Action] {
        if case .closed = state { return [] }
        receiving.setMode(mode)
        return deliverReceived()
    }

    mutating func datagramReceived(_ datagram: AddressedEnvelope<ByteBuffer>) -> [Action] {
        if case .closed = state { return [] }
        guard receiving.arrived(datagram) else { return [] }
        return deliverReceived()
    }

    mutating func receiveFilterAnswered(
        _ keep: Bool,
        data: Data,
        from address: SocketAddress,
        context: Any?
    ) -> [Action] {
        guard receiving.isFiltering, isReady else { return [] }
        receiving.filterEnded()
        var actions: [Action] = []
        if keep {
            actions.append(.deliver(.received(data, from: address, context: context)))
            receiving.delivered()
        }
        actions.append(contentsOf: deliverReceived())
        return actions
    }

    /// Delivers what receiving allows now, up to the first datagram a filter must judge (one at a time, so their
    /// order is kept); then reads from the kernel only while more is wanted.
    private mutating func deliverReceived() -> [Action] {
        var actions: [Action] = []
        if isReady {
            while let datagram = receiving.next() {
                var bytes = datagram.data
                let limit =
                    datagram.remoteAddress.protocol == .inet ? settings.maxReceiveIPv4 : settings.maxReceiveIPv6
                if bytes.readableBytes > limit { bytes = bytes.getSlice(at: bytes.readerIndex, length: limit)! }
                let data = Data(bytes.readableBytesView)
                if settings.hasReceiveFilter {
                    receiving.filterStarted()
                    actions.append(.runReceiveFilter(data, from: datagram.remoteAddress))
                    break
                }
                actions.append(.deliver(.received(data, from: datagram.remoteAddress, context: nil)))
                receiving.delivered()
            }
        }
        actions.append(contentsOf: updateReads(force: false))
        return actions
    }

    /// `.setReads` when whether to read changed (or, `force`, when the channels just became ready).
    mutating func updateReads(force: Bool) -> [Action] {
        let wants = isReady && receiving.wantsReads
        guard wants != readsOn || (force && wants) else { return [] }
        readsOn = wants
        return [.setReads(wants)]
    }
}
