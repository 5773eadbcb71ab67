import NIOCore

/// Where a datagram or a connect goes: a name to resolve (when its packet is queued) or an address.
enum UDPDestination {
    case host(String, port: Int)
    case address(SocketAddress)
}
