import Foundation

/// One datagram the delegate face asked to send, with its callback's tag; `destination` nil means the connected
/// peer.
struct UDPOutgoing {
    var data: Data
    var destination: UDPDestination?
    /// Seconds the send may wait for buffer space; negative: no limit.
    var timeout: TimeInterval
    var tag: Int
}
