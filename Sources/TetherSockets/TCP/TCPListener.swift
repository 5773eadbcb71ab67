public import Logging
public import NIOCore
public import NIOPosix
import TetherConcurrency

/// A listening TCP socket whose accepted connections arrive as an async sequence.
///
/// ```swift
/// let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
/// for try await connection in listener.connections {
///     Task { try await echo(connection) }
/// }
/// ```
public final class TCPListener: Sendable {
    /// How many accepted connections wait for the consumer, by default, before the listener stops accepting.
    public static let defaultMaxPendingConnections = 64

    let channel: any Channel
    private let stream: AsyncThrowingStream<TCPConnection, any Error>
    private let boundAddress: SocketAddress
    let gate: AcceptGate
    private let iterating = LockedBox(false)

    private init(
        channel: any Channel,
        stream: AsyncThrowingStream<TCPConnection, any Error>,
        boundAddress: SocketAddress,
        gate: AcceptGate
    ) {
        self.channel = channel
        self.stream = stream
        self.boundAddress = boundAddress
        self.gate = gate
    }

    /// Binds and listens.
    /// - Parameters:
    ///   - host: an IP literal, `localhost` (IPv4 loopback) or a name resolved off the event loop.
    ///   - port: 0...65535; 0 picks a free port (see ``localPort``).
    ///   - tls: server settings: each connection is yielded after its handshake; clients whose handshake fails
    ///     (or takes more than 10 seconds) are closed, logged and never yielded.
    ///   - backlog: the kernel's queue of pending connections.
    ///   - maxPendingConnections: accepted connections that wait for the consumer of ``connections``. When that
    ///     many wait, the listener stops accepting (clients then wait in the kernel's `backlog`) until the consumer
    ///     has taken half of them. Default ``defaultMaxPendingConnections``.
    ///   - eventLoopGroup: the engine's event loops.
    ///   - logger: logs at `.debug` the bound address, each connection handed to the consumer, failed TLS
    ///     handshakes, and each pause of accepting.
    /// - Throws: ``GCDAsyncSocketError``: `.badParam` for a bad port, empty host, backlog or pending limit below 1,
    ///   `.badConfig` for TLS settings that are not a usable server's, `.other` with the POSIX error of a failed
    ///   bind.
    public static func bind(
        host: String,
        port: Int,
        tls: TLSSettings? = nil,
        backlog: Int = 256,
        maxPendingConnections: Int = TCPListener.defaultMaxPendingConnections,
        on eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> TCPListener {
        guard !host.isEmpty else { throw GCDAsyncSocketError.badParam("Empty host") }
        guard (0...65_535).contains(port) else { throw GCDAsyncSocketError.badParam("Port \(port) is out of range") }
        guard backlog >= 1 else { throw GCDAsyncSocketError.badParam("Backlog must be at least 1") }
        guard maxPendingConnections >= 1 else {
            throw GCDAsyncSocketError.badParam("maxPendingConnections must be at least 1")
        }
        try tls?.validate(asyncFace: true, expectsServer: true)
        let loop = eventLoopGroup.next()
        let addresses = try await HostResolver.resolve(host: host, port: port, on: loop).get()
        guard let address = addresses.first else { throw GCDAsyncSocketError.badParam("No address for \(host)") }
        let gate = AcceptGate(limit: maxPendingConnections)
        let (stream, continuation) = AsyncThrowingStream<TCPConnection, any Error>.makeStream()
        let handOver: @Sendable (TCPConnection, any Channel) -> Void = { connection, child in
            logger?.debug("accepted", metadata: ["remote": "\(connection.remoteAddress)"])
            if case .terminated = continuation.yield(connection) {
                gate.released()
                child.close(promise: nil)
            }
        }
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(.backlog, value: Int32(clamping: backlog))
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .engineChildChannelOptions()
                .serverChannelInitializer { server in
                    server.eventLoop.makeCompletedFuture {
                        try server.pipeline.syncOperations.addHandler(AcceptCounter(gate: gate, logger: logger))
                    }
                }
                .childChannelInitializer { child in
                    child.eventLoop.makeCompletedFuture {
                        let connection: TCPConnection
                        do {
                            connection = try TCPConnection.adopt(child, logger: logger)
                        } catch {
                            gate.released()
                            throw error
                        }
                        guard let tls else {
                            // Handed over once active: NIO registers an accepted channel after this initializer,
                            // and never when the listener closed meanwhile (the channel then closes).
                            let active = child.eventLoop.makePromise(of: Void.self)
                            try child.pipeline.syncOperations.addHandler(ActivationSignal(promise: active))
                            active.futureResult.whenComplete { result in
                                switch result {
                                case .success: handOver(connection, child)
                                case .failure: gate.released()
                                }
                            }
                            return
                        }
                        let handshakeLimit = GCDAsyncSocketError.tls(
                            "The client's TLS handshake timed out",
                            underlying: nil
                        )
                        connection.secure(tls, timeout: Self.handshakeTimeout, timeoutError: handshakeLimit)
                            .whenComplete { result in
                                switch result {
                                case .success:
                                    handOver(connection, child)
                                case .failure(let error):
                                    gate.released()
                                    logger?.debug("TLS handshake failed", metadata: ["error": "\(error)"])
                                }
                            }
                    }
                }
                .bind(to: address)
                .get()
        } catch {
            continuation.finish()
            throw GCDAsyncSocketError.wrapping(error, function: "bind")
        }
        gate.attach(channel)
        channel.closeFuture.whenComplete { _ in continuation.finish() }
        let bound = channel.localAddress ?? address
        logger?.debug("listening", metadata: ["address": "\(bound)"])
        return TCPListener(channel: channel, stream: stream, boundAddress: bound, gate: gate)
    }

    /// How long an accepted client may take to complete its TLS handshake.
    static let handshakeTimeout = TimeAmount.seconds(10)

    /// The bound address; after ``close()``, the address it had.
    public var localAddress: SocketAddress { boundAddress }

    /// The bound port (the real one after binding port 0).
    public var localPort: Int { boundAddress.port ?? 0 }

    /// Returns once every task queued on the server channel's loop before this call has run (tests: the accept
    /// count is settled).
    func loopRoundTrip() async {
        _ = try? await channel.eventLoop.submit {}.get()
    }

    /// The accepted connections, in order, each once it is active (with `tls`, once its handshake completed); a
    /// client accepted as the listener closes is closed, never yielded. Ends after ``close()``. One consumer at a time: a second concurrent
    /// iterator throws `.badConfig`.
    public var connections: Connections { Connections(listener: self) }

    /// Stops accepting; connections already accepted stay open.
    public func close() async throws {
        do {
            try await channel.close()
        } catch ChannelError.alreadyClosed {
            return
        }
    }

    /// The accepted connections of a listener.
    public struct Connections: AsyncSequence, Sendable {
        /// Each element is an accepted connection.
        public typealias Element = TCPConnection
        let listener: TCPListener

        /// Starts iterating.
        public func makeAsyncIterator() -> AsyncIterator {
            let claimed = listener.iterating.withLock { busy -> Bool in
                if busy { return false }
                busy = true
                return true
            }
            return AsyncIterator(base: claimed ? listener.stream.makeAsyncIterator() : nil, listener: listener)
        }

        /// Iterates the accepted connections.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncThrowingStream<TCPConnection, any Error>.AsyncIterator?
            let listener: TCPListener

            /// The next accepted connection, or nil after ``TCPListener/close()``.
            /// - Throws: `.badConfig` for a second concurrent iterator.
            public mutating func next() async throws -> TCPConnection? {
                guard base != nil else {
                    throw GCDAsyncSocketError.badConfig("The connections of a listener have one consumer at a time")
                }
                let connection = try await base!.next()
                if connection != nil { listener.gate.released() }
                return connection
            }
        }
    }
}
