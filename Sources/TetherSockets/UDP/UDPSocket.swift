public import Logging
public import NIOCore
public import NIOPosix
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A UDP socket for Swift concurrency: send datagrams with `send(_:to:)`, receive them from ``datagrams``.
///
/// The async face of the same datagram engine that serves ``GCDAsyncUdpSocket``. The engine reads from the kernel only
/// while ``datagrams`` has room (a small buffer between the engine and the consumer): a slow consumer makes it stop
/// reading, and the kernel then drops what does not fit its receive buffer, as UDP does. A failed send (`EMSGSIZE`,
/// unreachable) throws for that send only; the socket stays open.
///
/// ```swift
/// let socket = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
/// try await socket.send(ByteBuffer(string: "ping"), toHost: "127.0.0.1", port: 9999)
/// for try await datagram in socket.datagrams { print(datagram.remoteAddress, datagram.data) }
/// ```
public final class UDPSocket: Sendable {
    typealias Producer = NIOThrowingAsyncSequenceProducer<
        Datagram, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, DemandRelay
    >

    let channel: any Channel
    let engine: NIOLoopBound<UDPEngine>
    /// The engine's direct-send gate, usable from any thread.
    let gate: UDPSendGate
    let logger: Logger?
    private let producer: Producer
    private let iteratorTaken = LockedBox(false)
    private let closed = LockedBox(false)

    /// The socket's local address.
    public let localAddress: SocketAddress

    private init(
        channel: any Channel,
        engine: NIOLoopBound<UDPEngine>,
        gate: UDPSendGate,
        producer: Producer,
        logger: Logger?
    ) {
        self.channel = channel
        self.engine = engine
        self.gate = gate
        self.producer = producer
        self.logger = logger
        self.localAddress = channel.localAddress!
    }

    deinit {
        // A socket dropped without close() still gives its descriptor back.
        if !closed.withLock({ $0 }) { channel.close(promise: nil) }
    }

    /// Binds a datagram socket to `host` (an IP literal, `localhost` or a name, resolved once; the first address
    /// wins) and `port` (0 = any free port).
    /// - Parameters:
    ///   - host: the local address; `0.0.0.0` or `::` for every interface.
    ///   - port: 0...65535.
    ///   - eventLoopGroup: the engine's event loops.
    ///   - logger: where to log at debug level.
    /// - Throws: ``GCDAsyncSocketError``: `.badParam` for an empty host or a bad port, `.other` with the POSIX or DNS
    ///   error when binding fails.
    public static func bind(
        host: String,
        port: Int,
        on eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> UDPSocket {
        guard !host.isEmpty else { throw GCDAsyncSocketError.badParam("Empty host") }
        guard (0...65_535).contains(port) else { throw GCDAsyncSocketError.badParam("Port \(port) is out of range") }
        let loop = eventLoopGroup.next()
        let addresses = try await HostResolver.resolve(host: host, port: port, on: loop).get()
        guard let address = addresses.first else {
            throw GCDAsyncSocketError.dns(DNSLookupError(code: EAI_FAIL, host: host))
        }
        let relay = DemandRelay()
        let made = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 64, highWatermark: 512),
            finishOnDeinit: true,
            delegate: relay
        )
        // Sendable: the source is used on the channel's event loop only (by the owner made there).
        let source = UncheckedSendableBox(made.source)
        let descriptor: Int32
        do {
            descriptor = try GCDAsyncUdpSocket.makeSocket(
                address.protocol == .inet6 ? AF_INET6 : AF_INET,
                sendBuffer: 0,
                ipv6Only: false
            )
            do {
                try GCDAsyncUdpSocket.bindDescriptor(descriptor, to: address)
            } catch {
                _ = UDPSystem.close(descriptor)
                throw error
            }
        } catch let error as GCDAsyncUdpSocketError {
            throw GCDAsyncSocketError(
                code: .other,
                domain: error.domain,
                message: error.message,
                underlying: error.underlying
            )
        }
        let channel: any Channel
        do {
            channel = try await UDPEngine.configure(DatagramBootstrap(group: loop))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let owner = AsyncFaceUDPOwner(source: source.value)
                        let engine = UDPEngine(owner: owner, gate: UDPSendGate(descriptor: descriptor))
                        owner.engine = engine
                        relay.attach(engine: engine, owner: owner, loop: channel.eventLoop)
                        engine.wantsReads = true
                        try channel.pipeline.syncOperations.addHandler(engine)
                    }
                }
                .withBoundSocket(descriptor).get()
        } catch {
            throw GCDAsyncSocketError.wrapping(error, function: "bind")
        }
        logger?.debug("udp bound", metadata: ["local": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
        let (engine, gate) = try await channel.eventLoop.submit {
            let handler = try channel.pipeline.syncOperations.handler(type: UDPEngine.self)
            return (NIOLoopBound(handler, eventLoop: channel.eventLoop), handler.gate)
        }.get()
        return UDPSocket(channel: channel, engine: engine, gate: gate, producer: made.sequence, logger: logger)
    }

    /// The local port (the real one after binding port 0).
    public var localPort: Int { localAddress.port ?? 0 }

    /// The received datagrams, one element each; ends after ``close()``. Single consumer: a second iterator
    /// throws `.badConfig`.
    public var datagrams: Datagrams { Datagrams(socket: self) }

    /// Sends one datagram to `address`; returns when the kernel took it.
    /// - Throws: ``GCDAsyncSocketError``: `.closed` after ``close()``; `.other`, domain `.posix`, with the errno the
    ///   kernel answered (`EMSGSIZE` for more than 65,507 bytes to an IPv4 address, raised by Tether itself).
    ///   The socket stays open. `CancellationError` when the task is cancelled before the kernel took the datagram
    ///   (also while it waits for room in the kernel): it is then never sent. A send that throws never leaves.
    public func send(_ data: ByteBuffer, to address: SocketAddress) async throws {
        try Task.checkCancellation()
        guard !closed.withLock({ $0 }) else { throw GCDAsyncSocketError.closedLocally }
        if address.protocol == .inet, data.readableBytes > 65_507 {
            throw GCDAsyncSocketError.posix(EMSGSIZE, function: "sendmsg")
        }
        let envelope = AddressedEnvelope(remoteAddress: address, data: data)
        // Straight to the kernel from this thread when nothing waits: no hop to the event loop and back.
        let loop = channel.eventLoop
        var waiting: EventLoopPromise<Void>?
        switch gate.send(
            envelope,
            queueWith: {
                waiting = loop.makePromise()
                return waiting!
            }
        ) {
        case .sent: return
        case .failed(let code): throw Self.sendError(IOError(errnoCode: code, reason: "sendto"))
        case .closed: throw GCDAsyncSocketError.closedLocally
        case .queued(let token):
            let promise = waiting!
            do {
                try await withTaskCancellationHandler {
                    try await promise.futureResult.get()
                } onCancel: {
                    // Withdrawn, it is never sent. Nil: the kernel took or refused it already, and that answer stands.
                    self.gate.withdraw(token)?.fail(CancellationError())
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if closed.withLock({ $0 }) || (error as? ChannelError) == .ioOnClosedChannel {
                    throw GCDAsyncSocketError.closedLocally
                }
                throw Self.sendError(error)
            }
        }
    }

    /// Resolves `host` (per call) and sends one datagram to its first address of this socket's family.
    /// - Throws: as ``send(_:to:)``, plus `.badParam` for an empty host or a bad port and the DNS error.
    public func send(_ data: ByteBuffer, toHost host: String, port: Int) async throws {
        guard !host.isEmpty else { throw GCDAsyncSocketError.badParam("Empty host") }
        guard (1...65_535).contains(port) else { throw GCDAsyncSocketError.badParam("Port \(port) is out of range") }
        let addresses = try await HostResolver.resolve(host: host, port: port, on: channel.eventLoop).get()
        let family = localAddress.protocol
        guard let address = addresses.first(where: { $0.protocol == family }) ?? addresses.first else {
            throw GCDAsyncSocketError.dns(DNSLookupError(code: EAI_FAIL, host: host))
        }
        try await send(data, to: address)
    }

    /// Turns `SO_BROADCAST` on or off.
    public func setBroadcastEnabled(_ enabled: Bool) async throws {
        guard !closed.withLock({ $0 }) else { throw GCDAsyncSocketError.closedLocally }
        do {
            try await channel.setOption(.socketOption(.so_broadcast), value: enabled ? 1 : 0).get()
        } catch {
            throw GCDAsyncSocketError.wrapping(error, function: "setsockopt")
        }
    }

    /// Joins a multicast group (a numeric address of the socket's family) on `interface` (a name such as `"lo"`
    /// or one of its addresses; nil lets the kernel choose).
    /// - Throws: `.badParam` for a non-numeric group or an unknown interface; the POSIX error of the join.
    public func joinMulticastGroup(_ group: String, interface: String? = nil) async throws {
        try await changeMembership(group, interface: interface, join: true)
    }

    /// Leaves a multicast group joined with ``joinMulticastGroup(_:interface:)``.
    public func leaveMulticastGroup(_ group: String, interface: String? = nil) async throws {
        try await changeMembership(group, interface: interface, join: false)
    }

    private func changeMembership(_ group: String, interface: String?, join: Bool) async throws {
        guard !closed.withLock({ $0 }) else { throw GCDAsyncSocketError.closedLocally }
        guard let groupAddress = try? SocketAddress(ipAddress: group, port: 0) else {
            throw GCDAsyncSocketError.badParam("Multicast group must be a numeric IP address: \(group)")
        }
        guard groupAddress.protocol == localAddress.protocol else {
            throw GCDAsyncSocketError.badParam("Socket and group do not have matching IP versions")
        }
        var interfaceIPv4: SocketAddress?
        var interfaceIndex: UInt32 = 0
        if let interface {
            interfaceIPv4 = try? InterfaceResolver.resolve(interface)?.ipv4
            interfaceIndex = GCDAsyncUdpSocket.interfaceIndex(interface)
            let known = groupAddress.protocol == .inet ? interfaceIPv4 != nil : interfaceIndex != 0
            guard known else { throw GCDAsyncSocketError.badParam("Unknown interface \"\(interface)\" for this group") }
        }
        // setsockopt through the gate, on its duplicate of the descriptor and under its lock: never on a descriptor
        // number NIO may have closed (and the system given to another socket) since. NIO's own joinGroup refuses
        // interfaces without the MULTICAST flag, such as loopback.
        do {
            let changed: Bool? = try gate.withDescriptor { fd in
                try GCDAsyncUdpSocket.setMembership(
                    fd,
                    group: groupAddress,
                    interfaceIPv4: interfaceIPv4,
                    interfaceIndex: interfaceIndex,
                    join: join
                )
                return true
            }
            if changed == nil { throw GCDAsyncSocketError.closedLocally }
        } catch let error as GCDAsyncUdpSocketError {
            throw GCDAsyncSocketError(
                code: .other,
                domain: error.domain,
                message: error.message,
                underlying: error.underlying
            )
        }
    }

    /// Closes the socket; ``datagrams`` ends once its buffered datagrams are consumed. Idempotent.
    public func close() async throws {
        let wasClosed = closed.withLock { value in
            defer { value = true }
            return value
        }
        guard !wasClosed else { return }
        gate.close()
        do {
            try await channel.close()
        } catch ChannelError.alreadyClosed {
            return
        } catch {
            throw GCDAsyncSocketError.wrapping(error, function: "close")
        }
    }

    static func sendError(_ error: any Error) -> GCDAsyncSocketError {
        if let errno = UDPErrno.of(error) { return .posix(errno, function: "sendmsg") }
        return GCDAsyncSocketError.wrapping(error, function: "sendmsg")
    }

    fileprivate func takeIterator() -> Bool {
        iteratorTaken.withLock { taken in
            defer { taken = true }
            return !taken
        }
    }

    /// The datagrams a ``UDPSocket`` receives.
    public struct Datagrams: AsyncSequence, Sendable {
        /// One received datagram.
        public typealias Element = Datagram
        let socket: UDPSocket

        /// The single iterator; a second one throws `.badConfig`.
        public func makeAsyncIterator() -> AsyncIterator {
            if socket.takeIterator() {
                return AsyncIterator(base: socket.producer.makeAsyncIterator(), error: nil)
            }
            return AsyncIterator(
                base: nil,
                error: GCDAsyncSocketError.badConfig("Datagrams can be iterated by one consumer only")
            )
        }

        /// Iterates the received datagrams.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: Producer.AsyncIterator?
            var error: GCDAsyncSocketError?

            /// The next datagram, or nil after the socket closed.
            public mutating func next() async throws -> Datagram? {
                if let error { throw error }
                return try await base?.next()
            }
        }
    }
}
