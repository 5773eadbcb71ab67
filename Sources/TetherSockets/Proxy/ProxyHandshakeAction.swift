import NIOCore

/// What a proxy handshake machine asks of the code that runs it.
enum ProxyHandshakeAction: Equatable {
    /// Send these bytes to the proxy.
    case write(ByteBuffer)
    /// Nothing to do until the proxy sends more.
    case waitForMoreBytes
    /// The tunnel is up; the bytes left in the buffer the machine was given belong to the tunnel.
    case tunnelEstablished
    /// The proxy refused, or broke the protocol: close the connection with this error.
    case fail(ProxyError)
}
