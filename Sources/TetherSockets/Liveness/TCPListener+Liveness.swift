public import Logging
public import NIOCore
public import NIOPosix

extension TCPListener {
    /// Binds and listens as ``bind(host:port:tls:backlog:maxPendingConnections:on:logger:)``, with `keepalive` set
    /// on the listening socket: every connection accepted from then on starts with it (the kernel copies a listening
    /// socket's options to the sockets it accepts). Tether addition.
    /// - Throws: as ``bind(host:port:tls:backlog:maxPendingConnections:on:logger:)``; the system's refusal of an
    ///   option as code `.other`, domain `.posix` (the listener is closed then).
    public static func bind(
        host: String,
        port: Int,
        tls: TLSSettings? = nil,
        backlog: Int = 256,
        maxPendingConnections: Int = TCPListener.defaultMaxPendingConnections,
        keepalive: TCPKeepalive,
        on eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> TCPListener {
        let listener = try await bind(
            host: host,
            port: port,
            tls: tls,
            backlog: backlog,
            maxPendingConnections: maxPendingConnections,
            on: eventLoopGroup,
            logger: logger
        )
        let channel = listener.channel
        do {
            try await channel.eventLoop.submit { try keepalive.apply(to: channel) }.get()
        } catch {
            try? await listener.close()
            throw GCDAsyncSocketError.wrapping(error, function: "setsockopt")
        }
        return listener
    }
}
