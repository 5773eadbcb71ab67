import Foundation
import NIOCore

/// Where a datagram or a connect goes: a name to resolve (when its packet is queued) or an address.
enum UDPDestination {
    case host(String, port: Int)
    case address(SocketAddress)
}

/// One datagram the delegate face asked to send, with its callback's tag; `destination` nil means the connected
/// peer.
struct UDPOutgoing {
    var data: Data
    var destination: UDPDestination?
    /// Seconds the send may wait for buffer space; negative: no limit.
    var timeout: TimeInterval
    var tag: Int
}
