public import Logging
import NIOConcurrencyHelpers
public import NIOCore
public import NIOPosix
import TetherConcurrency

/// A TCP connection for Swift concurrency: `try await connection.read(toLength: 7)`.
///
/// The async face of the same engine that serves ``GCDAsyncSocket``. Reads are served one at a time in the order they
/// reach the connection, and so are writes. A read that times out, exceeds its maximum length, is cancelled or
/// meets the end of the stream throws and **consumes nothing**: its bytes stay buffered for the next read. A write
/// that times out or is cancelled throws, but its bytes stay queued and go out in order. Only I/O errors,
/// ``close()`` and the last reference going away end the connection.
///
/// The buffers reads return are slices of the connection's receive buffer, which grows to 256 KiB for a bulk
/// stream: keep a small one for long (past the next reads) and it keeps that storage alive; copy it
/// (`ByteBuffer(bytes: buffer.readableBytesView)`) if you store many.
///
/// ```swift
/// let connection = try await TCPConnection.connect(host: "localhost", port: 7000)
/// try await connection.write(ByteBuffer(string: "PING\r\n"))
/// let line = try await connection.read(upTo: [0x0D, 0x0A], timeout: .seconds(5))
/// try await connection.close()
/// ```
public final class TCPConnection: Sendable {
    let channel: any Channel
    let engine: NIOLoopBound<SocketEngine>
    let logger: Logger?
    /// The addresses as they were when the connection was made: they stay readable after close.
    let addresses: (remote: SocketAddress, local: SocketAddress)
    let security: LockedBox<AsyncFaceOwner.Security>
    /// The name given to connect, for TLS name verification.
    let connectHost: String?
    /// The write window shared with the engine.
    let admission: WriteAdmission

    init(
        channel: any Channel,
        engine: SocketEngine,
        security: LockedBox<AsyncFaceOwner.Security>,
        connectHost: String?,
        addresses: (remote: SocketAddress, local: SocketAddress),
        logger: Logger?
    ) {
        self.channel = channel
        self.addresses = addresses
        self.engine = NIOLoopBound(engine, eventLoop: channel.eventLoop)
        self.admission = WriteAdmission()
        engine.admission = self.admission
        self.security = security
        self.connectHost = connectHost
        self.logger = logger
    }

    /// A connection let go of without ``close()`` closes: its descriptor is released once the channel has closed
    /// (queued writes are dropped, as with `close()`).
    deinit {
        channel.close(promise: nil)
    }

    /// On the channel's loop: wraps a connected channel with an async-face engine.
    /// - Throws: `.closedByPeer` when the channel has no addresses any more (the peer left before adoption).
    static func adopt(_ channel: any Channel, connectHost: String? = nil, logger: Logger?) throws -> TCPConnection {
        guard let remote = channel.remoteAddress, let local = channel.localAddress else {
            throw GCDAsyncSocketError.closedByPeer
        }
        let owner = AsyncFaceOwner()
        let engine = SocketEngine(eventLoop: channel.eventLoop, owner: owner, policy: .asyncFace)
        try channel.pipeline.syncOperations.addHandler(engine)
        return TCPConnection(
            channel: channel,
            engine: engine,
            security: owner.security,
            connectHost: connectHost,
            addresses: (remote, local),
            logger: logger
        )
    }

    /// On the loop: starts the upgrade and returns when the connection is secure.
    func secure(
        _ settings: TLSSettings,
        timeout: TimeAmount? = nil,
        timeoutError: GCDAsyncSocketError = .connectTimeout
    ) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        engine.value.startTLS(
            TLSUpgrade(
                settings: settings,
                connectHost: connectHost,
                timeout: timeout,
                timeoutError: timeoutError,
                promise: promise
            )
        )
        return promise.futureResult
    }

    /// Connects to `host` (a name, an IP literal or `localhost`): the name is resolved off the event loop, IPv4 is
    /// tried first and IPv6 300 ms later when the name has both; the first to connect wins.
    /// - Parameters:
    ///   - host: the peer's name or address.
    ///   - port: 1...65535.
    ///   - timeout: covers resolution and connecting.
    ///   - eventLoopGroup: the engine's event loops.
    ///   - logger: where to log at debug level.
    ///   - tls: when set, the connection is secured before it is returned (client role; the handshake counts
    ///     against `timeout`). Connecting by name verifies that name (see ``TLSSettings``), through a proxy too.
    ///   - proxy: when set, the connection goes through this proxy (``ProxyConfiguration``), `timeout` covering its
    ///     handshake; `host` is sent to it unresolved, and ``remoteAddress`` is the proxy's address.
    /// - Throws: ``GCDAsyncSocketError``: `.badParam` for an empty host or a bad port, `.badConfig` for bad TLS
    ///   settings, `.connectTimeout`, or `.other` with the POSIX, DNS or TLS error, or the proxy's refusal
    ///   (``GCDAsyncSocketError/proxyError``).
    public static func connect(
        host: String,
        port: Int,
        timeout: Duration = .seconds(10),
        tls: TLSSettings? = nil,
        proxy: ProxyConfiguration? = nil,
        on eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> TCPConnection {
        guard !host.isEmpty else { throw GCDAsyncSocketError.badParam("Empty host") }
        guard (1...65_535).contains(port) else { throw GCDAsyncSocketError.badParam("Port \(port) is out of range") }
        try tls?.validate(asyncFace: true, expectsServer: false)
        return try await connect(
            target: .host(host, port: port),
            timeout: timeout,
            tls: tls,
            proxy: proxy,
            on: eventLoopGroup,
            logger: logger
        )
    }

    /// Connects to an IPv4, IPv6 or unix-domain address; with `tls`, secures it before returning (the name is
    /// verified only when ``TLSSettings/peerName`` is set).
    /// - Throws: ``GCDAsyncSocketError`` as ``connect(host:port:timeout:tls:proxy:on:logger:)``.
    public static func connect(
        to address: SocketAddress,
        timeout: Duration = .seconds(10),
        tls: TLSSettings? = nil,
        on eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> TCPConnection {
        try tls?.validate(asyncFace: true, expectsServer: false)
        let target: TCPConnector.Target
        switch address {
        case .unixDomainSocket:
            target = .unixPath(address.pathname ?? "")
        default:
            guard let port = address.port, (1...65_535).contains(port) else {
                throw GCDAsyncSocketError.badParam("Port \(address.port ?? 0) is out of range")
            }
            target = .address(address)
        }
        return try await connect(target: target, timeout: timeout, tls: tls, on: eventLoopGroup, logger: logger)
    }

    private static func connect(
        target: TCPConnector.Target,
        timeout: Duration,
        tls: TLSSettings?,
        proxy: ProxyConfiguration? = nil,
        on eventLoopGroup: any EventLoopGroup,
        logger: Logger?
    ) async throws -> TCPConnection {
        let loop = eventLoopGroup.next()
        let timeAmount = TimeAmount(timeout)
        let deadline = NIODeadline.now() + timeAmount
        var connectHost: String?
        if case .host(let host, _) = target { connectHost = host }
        let host = connectHost
        let connectorBox = ConnectorSlot()
        // The engine joins the pipeline in the same event-loop tick that connects the channel, so that no byte can
        // arrive before it does.
        let connection: TCPConnection = try await withTaskCancellationHandler {
            try await loop.flatSubmit {
                var options = TCPConnector.Options()
                options.timeout = timeAmount
                options.proxy = proxy
                let connector = TCPConnector(target: target, options: options, eventLoop: loop)
                connectorBox.set(NIOLoopBound(connector, eventLoop: loop))
                return connector.start().flatMapThrowing { channel in
                    do {
                        return try adopt(channel, connectHost: host, logger: logger)
                    } catch {
                        channel.close(promise: nil)
                        throw GCDAsyncSocketError.wrapping(error, function: "connect")
                    }
                }.flatMap { connection in
                    guard let tls else { return loop.makeSucceededFuture(connection) }
                    return connection.secure(tls, timeout: max(deadline - .now(), .zero)).map { connection }
                }.flatMapErrorThrowing { throw GCDAsyncSocketError.markingNotConnected($0) }
            }.get()
        } onCancel: {
            loop.execute {
                connectorBox.get()?.value.cancel(with: CancellationError())
            }
        }
        logger?.debug("connected", metadata: ["remote": "\(connection.remoteAddress)"])
        return connection
    }

    /// The peer's address; after close, the address the connection had.
    public var remoteAddress: SocketAddress { addresses.remote }

    /// The local address; after close, the address the connection had.
    public var localAddress: SocketAddress { addresses.local }

    /// Whether the connection is encrypted: its TLS handshake completed.
    public var isSecure: Bool { security.withLock { $0.isSecure } }

    /// The protocol ALPN chose during the TLS handshake; nil without TLS or when none was agreed.
    public var negotiatedApplicationProtocol: String? { security.withLock { $0.negotiatedProtocol } }

    /// Secures the connection once every read and write started before this call completed; later reads and writes
    /// wait for the handshake and run encrypted. One upgrade per connection. Bytes already received are fed to TLS.
    /// - Throws: `.badConfig` (bad settings, a second upgrade, `manuallyEvaluatesTrust`), or the TLS error that
    ///   closed the connection (code `.other`, domain `.tls`).
    public func startTLS(_ settings: TLSSettings) async throws {
        try settings.validate(asyncFace: true, expectsServer: nil)
        let connection = self
        // Writes from here on go through the engine, behind the upgrade's marker.
        admission.setUpgrading(true)
        defer { admission.setUpgrading(false) }
        try await channel.eventLoop.flatSubmit {
            connection.engine.value.drainAdmitted()
            return connection.secure(settings)
        }.get()
    }

    // MARK: reading

    /// Reads exactly `length` bytes.
    /// - Parameters:
    ///   - length: ≥ 0; 0 returns an empty buffer.
    ///   - timeout: nil = none; zero or negative fails at once unless the buffer holds enough.
    /// - Throws: `.badParam` (negative length), `.readTimeout`, `.closed` (the peer closed first; the partial bytes
    ///   stay buffered), `CancellationError`. Nothing is consumed when it throws.
    public func read(toLength length: Int, timeout: Duration? = nil) async throws -> ByteBuffer {
        guard length >= 0 else { throw GCDAsyncSocketError.badParam("Negative length \(length)") }
        if length == 0 { return ByteBuffer() }
        return try await read(.length(length), timeout: timeout)!
    }

    /// Reads the bytes up to and including `separator` (as the original).
    /// - Parameters:
    ///   - separator: not empty.
    ///   - maxLength: the most bytes the result may have, separator included; ≥ `separator.count`.
    ///   - timeout: nil = none.
    /// - Throws: `.badParam`, `.readMaxedOut` (no separator within `maxLength`), `.readTimeout`, `.closed`,
    ///   `CancellationError`; nothing is consumed when it throws.
    public func read(
        upTo separator: [UInt8],
        maxLength: Int = 65_536,
        timeout: Duration? = nil
    ) async throws
        -> ByteBuffer
    {
        guard !separator.isEmpty else { throw GCDAsyncSocketError.badParam("Empty separator") }
        guard maxLength >= separator.count else {
            throw GCDAsyncSocketError.badParam("maxLength \(maxLength) is shorter than the separator")
        }
        return try await read(.separator(separator, maxLength: maxLength), timeout: timeout)!
    }

    /// Reads what is available: at least 1 byte, at most `maxLength`.
    ///
    /// What is available is what one read from the socket brought (small reads that arrived together come joined):
    /// a stream that runs ahead of its reader comes over several calls, one socket read each, never copied to join
    /// them.
    /// - Returns: the bytes, or nil once the peer closed and every byte has been read.
    /// - Throws: `.badParam` (`maxLength < 1`), `.readTimeout`, `CancellationError`.
    public func readAvailable(maxLength: Int = 65_536, timeout: Duration? = nil) async throws -> ByteBuffer? {
        guard maxLength >= 1 else { throw GCDAsyncSocketError.badParam("maxLength must be at least 1") }
        return try await read(.available(maxLength: maxLength), timeout: timeout)
    }

    func read(_ kind: ReadKind, timeout: Duration?) async throws -> ByteBuffer? {
        let idBox = OperationID()
        let engine = self.engine
        let loop = channel.eventLoop
        let time = timeout.map { TimeAmount($0) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                loop.execute {
                    if idBox.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    idBox.set(engine.value.enqueueRead(kind, timeout: time, waiter: .task(continuation)))
                }
            }
        } onCancel: {
            loop.execute {
                if let id = idBox.cancel() { engine.value.cancelRead(id: id, error: CancellationError()) }
            }
        }
    }

    // MARK: writing

    /// Writes `buffer`; returns once it is queued with less than 4 MiB of earlier writes still ahead of it on
    /// their way to the kernel (as NIOAsyncChannel's writer returns on the channel's writability).
    ///
    /// While there is room, a write returns without waiting for the event loop; a full window makes it wait until
    /// the peer took enough bytes that less than 2 MiB are ahead of it. Writes go out in order. An I/O error that
    /// hits bytes after their write returned ends the connection, and the next operation (or `close()`) throws it;
    /// `close()` sends every accepted byte first.
    /// - Throws: `.writeTimeout` or `CancellationError` while waiting for room (the bytes still go out, in order),
    ///   `.closed`, or the I/O error that ended the connection.
    public func write(_ buffer: ByteBuffer, timeout: Duration? = nil) async throws {
        guard buffer.readableBytes > 0 else { return }
        let admitted = admission.admit(buffer)
        if admitted.admitted {
            if admitted.schedulesDrain {
                let engine = self.engine
                channel.eventLoop.execute { engine.value.drainAdmitted() }
            }
            return
        }
        admission.beginSlowWrite()
        let idBox = OperationID()
        let engine = self.engine
        let loop = channel.eventLoop
        let time = timeout.map { TimeAmount($0) }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                loop.execute {
                    let id = engine.value.enqueueWrite(buffer, timeout: time, waiter: .task(continuation))
                    idBox.set(id)
                    if idBox.isCancelled { engine.value.abandonWrite(id: id, error: CancellationError()) }
                }
            }
        } onCancel: {
            loop.execute {
                if let id = idBox.cancel() { engine.value.abandonWrite(id: id, error: CancellationError()) }
            }
        }
    }

    /// Writes a sequence of bytes (one copy into a buffer).
    public func write<Bytes: Sequence & Sendable>(contentsOf bytes: Bytes, timeout: Duration? = nil) async throws
    where Bytes.Element == UInt8 {
        var buffer = channel.allocator.buffer(capacity: bytes.underestimatedCount)
        buffer.writeBytes(bytes)
        try await write(buffer, timeout: timeout)
    }

    // MARK: closing

    /// Sends a FIN: the peer sees the end of the stream; reading goes on.
    public func halfClose() async throws {
        let engine = self.engine
        let loop = channel.eventLoop
        try await loop.flatSubmit {
            let promise = loop.makePromise(of: Void.self)
            engine.value.halfClose(promise: promise)
            return promise.futureResult
        }.get()
    }

    /// Closes the connection: pending reads throw `.closed`; bytes of writes that already returned go out first.
    /// Idempotent.
    ///
    /// - Throws: `.writeTimeout` when the peer did not take the accepted bytes within 10 s (the connection is
    ///   closed anyway and those bytes are lost), the I/O error that hit them, or `CancellationError` when the
    ///   calling task is cancelled while it waits (the connection closes at once).
    public func close() async throws {
        let engine = self.engine
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: Void.self)
        try await withTaskCancellationHandler {
            loop.execute { engine.value.closeGracefully(promise: promise) }
            // Cancelled before the close reached the loop: the handler's abort may have run first.
            if Task.isCancelled { loop.execute { engine.value.abortGracefulClose() } }
            try await promise.futureResult.get()
        } onCancel: {
            loop.execute { engine.value.abortGracefulClose() }
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanos = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if nanos.overflow {
            self = .nanoseconds(seconds < 0 ? Int64.min / 2 : Int64.max / 2)
        } else {
            self = .nanoseconds(nanos.partialValue + attoseconds / 1_000_000_000)
        }
    }
}
