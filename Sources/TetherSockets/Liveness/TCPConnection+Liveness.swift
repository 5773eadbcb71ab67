public import Logging
public import NIOCore
public import NIOPosix
import TetherConcurrency

/// Liveness on the async face (Tether additions): keepalive, idle events as a stream, the heartbeat. A heartbeat
/// that gets no reply closes the connection with ``GCDAsyncSocketError/Code/heartbeatTimeout``: every pending and
/// later operation throws it. `connect` throws errors marked ``GCDAsyncSocketError/Disconnection/notConnected``;
/// a connection that ends later marks them ``GCDAsyncSocketError/Disconnection/connectionLost``.
extension TCPConnection {
    /// Connects as ``connect(host:port:timeout:tls:proxy:on:logger:)`` and puts `keepalive` in force before returning.
    /// - Throws: as ``connect(host:port:timeout:tls:proxy:on:logger:)``.
    public static func connect(
        host: String,
        port: Int,
        timeout: Duration = .seconds(10),
        tls: TLSSettings? = nil,
        keepalive: TCPKeepalive,
        on eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> TCPConnection {
        let connection = try await connect(
            host: host,
            port: port,
            timeout: timeout,
            tls: tls,
            on: eventLoopGroup,
            logger: logger
        )
        try await connection.setKeepalive(keepalive)
        return connection
    }

    /// Connects as ``connect(to:timeout:tls:on:logger:)`` and puts `keepalive` in force before returning.
    /// - Throws: as ``connect(to:timeout:tls:on:logger:)``.
    public static func connect(
        to address: SocketAddress,
        timeout: Duration = .seconds(10),
        tls: TLSSettings? = nil,
        keepalive: TCPKeepalive,
        on eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> TCPConnection {
        let connection = try await connect(to: address, timeout: timeout, tls: tls, on: eventLoopGroup, logger: logger)
        try await connection.setKeepalive(keepalive)
        return connection
    }

    /// Puts TCP keepalive and the user timeout in force on this connection (default ``TCPKeepalive/off``). A
    /// connection keepalive finds dead ends: operations throw `ETIMEDOUT` (code `.other`, domain `.posix`).
    /// - Throws: `.closed` after the connection ended; the system's refusal as code `.other`, domain `.posix`.
    public func setKeepalive(_ keepalive: TCPKeepalive) async throws {
        try await updateLiveness { $0.keepalive = keepalive }
    }

    /// Sends `heartbeat`'s ping whenever the connection has written nothing for its interval, and closes the
    /// connection with ``GCDAsyncSocketError/Code/heartbeatTimeout`` when no reply follows within its timeout. nil
    /// stops it.
    /// - Throws: `.closed` after the connection ended.
    public func setHeartbeat(_ heartbeat: Heartbeat?) async throws {
        try await updateLiveness { $0.heartbeat = heartbeat }
    }

    /// Tells the heartbeat that the reply to its ping arrived (with ``Heartbeat/Reply/confirmedByApplication``).
    /// Ignored when no ping is out.
    public func heartbeatReplyReceived() {
        let engine = self.engine
        channel.eventLoop.execute { engine.value.livenessReplyConfirmed() }
    }

    /// Watches the connection for idleness with SwiftNIO's `IdleStateHandler` semantics and returns the events as
    /// they come. One watcher at a time: a new call replaces the timeouts and finishes the stream the previous call
    /// returned; ``IdleTimeouts/none`` stops watching. The stream finishes when the connection ends; it keeps the
    /// 16 newest events a slow reader has not taken.
    public func idleEvents(_ timeouts: IdleTimeouts) -> AsyncStream<IdleStateEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: IdleStateEvent.self,
            bufferingPolicy: .bufferingNewest(16)
        )
        let engine = self.engine
        channel.eventLoop.execute {
            let engine = engine.value
            guard let owner = engine.owner as? AsyncFaceOwner, !engine.isClosed else {
                continuation.finish()
                return
            }
            let previous = owner.idleEvents.withLock { slot in
                defer { slot = continuation }
                return slot
            }
            previous?.finish()
            var settings = engine.liveness?.settings ?? LivenessSettings()
            settings.idle = timeouts
            try? engine.configureLiveness(settings)
        }
        return stream
    }

    private func updateLiveness(_ change: @escaping @Sendable (inout LivenessSettings) -> Void) async throws {
        let engine = self.engine
        try await channel.eventLoop.submit {
            let engine = engine.value
            guard !engine.isClosed, engine.context != nil else { throw GCDAsyncSocketError.closedLocally }
            var settings = engine.liveness?.settings ?? LivenessSettings()
            change(&settings)
            do {
                try engine.configureLiveness(settings)
            } catch {
                throw GCDAsyncSocketError.wrapping(error, function: "setsockopt")
            }
        }.get()
    }
}
