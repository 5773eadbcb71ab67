import Dispatch
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One life of an ``AsyncUdpSocket`` on its event loop: the engines of its sockets, the FIFO send queue (sends
/// and the connect packet) and the received datagrams not delivered yet. Every member is touched on `loop` only,
/// except the entry points, which hop there.
final class UDPLife: UDPEngineOwner {
    enum Destination {
        case connected
        case host(String, port: Int)
        case address(SocketAddress)
    }

    struct Outgoing {
        var data: Data
        var destination: Destination
        var timeout: TimeInterval
        var tag: Int
    }

    enum Packet {
        case send(Outgoing)
        case connect(EventLoopFuture<[SocketAddress]>)
    }

    /// A queued packet with its destination's resolution, started when it was queued.
    private struct Queued {
        var packet: Packet
        var resolution: EventLoopFuture<[SocketAddress]>?
    }

    let socket: AsyncUdpSocket
    let life: UInt64
    let loop: any EventLoop
    /// Direct sends from the sending thread while the queue is idle; mirrors the loop's state.
    let fastPath = UDPFastPath()

    private var engines: [NIOBSDSocket.ProtocolFamily: UDPEngine] = [:]
    private var channels: [NIOBSDSocket.ProtocolFamily: any Channel] = [:]
    private var pendingAdoptions = 0
    private var isShutDown = false
    private var queue = CircularBuffer<Queued>()
    private var isSending = false
    private var closesAfterSending = false
    private var connected: SocketAddress?
    private var receiving = AsyncUdpSocket.ReceiveQueue()

    init(socket: AsyncUdpSocket, life: UInt64, loop: any EventLoop) {
        self.socket = socket
        self.life = life
        self.loop = loop
    }

    /// Runs `body` on the loop. Until it has run, sends take the loop's path too: an operation asked for before a
    /// send (pausing reception, closing after sends, …) takes effect before it, as in the original's one queue.
    private func onLoop(_ body: @escaping (UDPLife) -> Void) {
        let me = UncheckedSendable(self)
        let work = UncheckedSendable(body)
        fastPath.packetQueued()
        loop.execute {
            work.value(me.value)
            me.value.fastPath.packetFinished()
        }
    }

    // MARK: adoption

    /// Hands bound descriptors to NIO datagram channels running this life's engines.
    func adopt(ipv4: Int32?, ipv6: Int32?) {
        // On the loop, never inline: a registration completing at once would report back into the socket's lock.
        onLoop { me in me.startAdoption(ipv4: ipv4, ipv6: ipv6) }
    }

    private func startAdoption(ipv4: Int32?, ipv6: Int32?) {
        let descriptors = [(NIOBSDSocket.ProtocolFamily.inet, ipv4), (.inet6, ipv6)]
        pendingAdoptions = descriptors.filter { $0.1 != nil }.count
        for (family, fd) in descriptors {
            guard let fd else { continue }
            let me = UncheckedSendable(self)
            UDPEngine.configure(DatagramBootstrap(group: loop))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let engine = UDPEngine(owner: me.value, descriptor: fd)
                        me.value.engines[family] = engine
                        try channel.pipeline.syncOperations.addHandler(engine)
                    }
                }
                .withBoundSocket(fd)
                .hop(to: loop)
                .whenComplete { result in
                    me.value.adopted(family, result: result)
                }
        }
    }

    private func adopted(_ family: NIOBSDSocket.ProtocolFamily, result: Result<any Channel, any Error>) {
        pendingAdoptions -= 1
        switch result {
        case .success(let channel):
            let stillWanted = socket.state.withLock { s in
                guard let sockets = s.sockets, sockets.life == life else { return false }
                return family == .inet ? sockets.fd4 != nil : sockets.fd6 != nil
            }
            if isShutDown || !stillWanted {
                engines[family] = nil
                channel.close(promise: nil)
            } else {
                channels[family] = channel
            }
        case .failure(let error):
            engines[family] = nil
            socket.lifeEnded(life, error: AsyncUdpSocketError.wrapping(error, function: "register"))
            return
        }
        if pendingAdoptions == 0 {
            updateReads()
            publishFastPath()
            sendNext()
        }
    }

    private var isReady: Bool { pendingAdoptions == 0 && !isShutDown }

    /// Mirrors what direct sends depend on into the fast path.
    private func publishFastPath() {
        fastPath.publish(
            isOpen: isReady && !closesAfterSending,
            gates: engines.mapValues(\.gate),
            connected: connected
        )
    }

    /// Closes one family's channel (never inline: its close reports back into the socket's lock).
    func closeFamily(_ family: NIOBSDSocket.ProtocolFamily) {
        onLoop { me in
            me.engines[family] = nil
            me.channels.removeValue(forKey: family)?.close(promise: nil)
            me.publishFastPath()
        }
    }

    /// Ends the life: channels closed, queued sends and undelivered datagrams dropped.
    func shutdown() {
        onLoop { me in
            me.isShutDown = true
            me.publishFastPath()
            me.queue.removeAll()
            me.receiving.removeAll()
            me.engines.removeAll()
            for channel in me.channels.values { channel.close(promise: nil) }
            me.channels.removeAll()
        }
    }

    func engineDidClose(_ engine: UDPEngine, error: (any Error)?) {
        guard !isShutDown, let family = engines.first(where: { $0.value === engine })?.key else { return }
        engines[family] = nil
        channels[family] = nil
        publishFastPath()
        // A socket closed under us (not by close, connect or a multicast join): the life ends.
        socket.lifeEnded(life, error: error.map { AsyncUdpSocketError.wrapping($0, function: "recvmsg") })
    }

    // MARK: sending

    func enqueue(_ packet: Packet) {
        fastPath.packetQueued()
        onLoop { me in
            var queued = Queued(packet: packet)
            switch packet {
            case .connect(let future): queued.resolution = future
            case .send(let outgoing):
                if case .host(let host, let port) = outgoing.destination {
                    queued.resolution = HostResolver.resolve(host: host, port: port, on: me.loop)
                }
            }
            me.queue.append(queued)
            me.sendNext()
        }
    }

    func closeAfterSending() {
        onLoop { me in
            me.closesAfterSending = true
            me.publishFastPath()
            me.sendNext()
        }
    }

    private func sendNext() {
        guard isReady, !isSending else { return }
        guard let head = queue.first else {
            if closesAfterSending { socket.lifeEnded(life, error: nil) }
            return
        }
        isSending = true
        if let resolution = head.resolution {
            resolution.hop(to: loop).whenComplete { [self] result in
                guard !isShutDown, !queue.isEmpty else { return }
                let next = queue.removeFirst()
                process(next.packet, resolved: result)
            }
        } else {
            let next = queue.removeFirst()
            process(next.packet, resolved: nil)
        }
    }

    private func finished() {
        isSending = false
        fastPath.packetFinished()
        sendNext()
    }

    private func process(_ packet: Packet, resolved: Result<[SocketAddress], any Error>?) {
        guard !isShutDown else { return }
        switch packet {
        case .connect:
            connect(resolved ?? .success([]))
        case .send(let outgoing):
            send(outgoing, resolved: resolved)
        }
    }

    private func connect(_ resolved: Result<[SocketAddress], any Error>) {
        let address: SocketAddress
        do {
            address = try choose(from: resolved.get())
        } catch {
            connectFailed(.wrapping(error, function: "connect"))
            return
        }
        guard let channel = channels[address.protocol] else {
            connectFailed(.other("No socket for the address family of \(address)"))
            return
        }
        channel.connect(to: address).hop(to: loop).whenComplete { [self] result in
            switch result {
            case .success:
                connected = address
                publishFastPath()
                receiving.connectedPeer = address
                socket.connectFinished(life: life, address: address)
                let data = address.sockaddrData
                socket.deliver(life: life) { sock, delegate in delegate.udpSocket(sock, didConnectToAddress: data) }
            case .failure(let error):
                connectFailed(.wrapping(error, function: "connect"))
            }
            finished()
        }
    }

    private func connectFailed(_ error: AsyncUdpSocketError) {
        socket.connectFinished(life: life, address: nil)
        socket.deliver(life: life) { sock, delegate in delegate.udpSocket(sock, didNotConnect: error) }
        finished()
    }

    /// The address to use: by preference among the families this life has a socket for.
    private func choose(from addresses: [SocketAddress]) throws -> SocketAddress {
        let preference = socket.state.withLock { $0.configuration.preference }
        let usable = addresses.filter { channels[$0.protocol] != nil }
        let chosen: SocketAddress?
        switch preference {
        case .neutral: chosen = usable.first
        case .ipv4: chosen = usable.first { $0.protocol == .inet } ?? usable.first
        case .ipv6: chosen = usable.first { $0.protocol == .inet6 } ?? usable.first
        }
        guard let chosen else {
            throw AsyncUdpSocketError.other(
                "Address family of the resolved addresses is disabled or its socket is not available"
            )
        }
        return chosen
    }

    private func send(_ outgoing: Outgoing, resolved: Result<[SocketAddress], any Error>?) {
        let address: SocketAddress
        do {
            switch outgoing.destination {
            case .connected:
                guard let connected else {
                    throw AsyncUdpSocketError.badConfig(
                        "You must specify destination of packet for a non-connected socket"
                    )
                }
                address = connected
            case .address(let given):
                guard connected == nil else {
                    throw AsyncUdpSocketError.badConfig("Cannot specify destination of packet for connected socket")
                }
                address = try choose(from: [given])
            case .host:
                guard connected == nil else {
                    throw AsyncUdpSocketError.badConfig("Cannot specify destination of packet for connected socket")
                }
                address = try choose(from: resolved?.get() ?? [])
            }
            if address.protocol == .inet, outgoing.data.count > 65_507 {
                throw AsyncUdpSocketError.posix(EMSGSIZE, function: "sendmsg")
            }
        } catch {
            unsent(outgoing.tag, .wrapping(error, function: "sendmsg"))
            return
        }
        let filter = socket.state.withLock { $0.sendFilter }
        guard let filter else {
            write(outgoing, to: address)
            return
        }
        let addressData = address.sockaddrData
        if let queue = filter.queue, filter.isAsynchronous {
            let me = UncheckedSendable(self)
            let item = UncheckedSendable(outgoing)
            queue.async {
                let keep = filter.block(item.value.data, addressData, item.value.tag)
                me.value.loop.execute {
                    guard !me.value.isShutDown else { return }
                    me.value.filtered(item.value, to: address, keep: keep)
                }
            }
        } else {
            let keep =
                filter.queue.map { queue in queue.sync { filter.block(outgoing.data, addressData, outgoing.tag) } }
                ?? filter.block(outgoing.data, addressData, outgoing.tag)
            filtered(outgoing, to: address, keep: keep)
        }
    }

    private func filtered(_ outgoing: Outgoing, to address: SocketAddress, keep: Bool) {
        if keep {
            write(outgoing, to: address)
        } else {
            // The original reports a filtered-out datagram as sent.
            sent(outgoing.tag)
        }
    }

    private func write(_ outgoing: Outgoing, to address: SocketAddress) {
        guard let engine = engines[address.protocol] else {
            unsent(outgoing.tag, .other("No socket for the address family of \(address)"))
            return
        }
        var buffer = ByteBufferAllocator().buffer(capacity: outgoing.data.count)
        buffer.writeBytes(outgoing.data)
        let promise = loop.makePromise(of: Void.self)
        let attempt = SendAttempt()
        let tag = outgoing.tag
        promise.futureResult.whenComplete { [self] result in
            guard !attempt.done else { return }
            attempt.done = true
            attempt.timer?.cancel()
            switch result {
            case .success: sent(tag)
            case .failure(let error): unsent(tag, .wrapping(error, function: "sendmsg"))
            }
        }
        engine.send(AddressedEnvelope(remoteAddress: address, data: buffer), promise: promise)
        guard !attempt.done, outgoing.timeout >= 0 else { return }
        // The kernel had no room: the timer starts now, as the original's does on EAGAIN.
        attempt.timer = loop.scheduleTask(in: .nanoseconds(Int64(outgoing.timeout * 1_000_000_000))) { [self] in
            guard !attempt.done else { return }
            attempt.done = true
            unsent(tag, .sendTimeout)
        }
    }

    private func sent(_ tag: Int) {
        socket.deliver(life: life) { sock, delegate in delegate.udpSocket(sock, didSendDataWithTag: tag) }
        finished()
    }

    private func unsent(_ tag: Int, _ error: AsyncUdpSocketError) {
        socket.deliver(life: life) { sock, delegate in
            delegate.udpSocket(sock, didNotSendDataWithTag: tag, dueToError: error)
        }
        finished()
    }

    // MARK: receiving

    func setReceiveMode(_ newMode: AsyncUdpSocket.ReceiveMode) {
        onLoop { me in
            me.receiving.setMode(newMode)
            me.deliverReceived()
        }
    }

    func engine(_ engine: UDPEngine, didReceive datagram: AddressedEnvelope<ByteBuffer>) {
        guard receiving.arrived(datagram) else { return }
        deliverReceived()
    }

    private func updateReads() {
        let wants = isReady && receiving.wantsReads
        for engine in engines.values where engine.wantsReads != wants { engine.wantsReads = wants }
    }

    private func deliverReceived() {
        defer { updateReads() }
        guard isReady else { return }
        let (filter, limit4, limit6) = socket.state.withLock { s in
            (s.receiveFilter, Int(s.configuration.maxReceiveIPv4), Int(s.configuration.maxReceiveIPv6))
        }
        while let datagram = receiving.next() {
            var bytes = datagram.data
            let limit = datagram.remoteAddress.protocol == .inet ? limit4 : limit6
            if bytes.readableBytes > limit { bytes = bytes.getSlice(at: bytes.readerIndex, length: limit)! }
            let data = Data(bytes.readableBytesView)
            let address = datagram.remoteAddress.sockaddrData
            guard let filter else {
                hand(data, from: address, context: nil)
                continue
            }
            if let queue = filter.queue, filter.isAsynchronous {
                receiving.filterStarted()
                let me = UncheckedSendable(self)
                queue.async {
                    var context: Any?
                    let keep = filter.block(data, address, &context)
                    let carried = UncheckedSendable(context)
                    me.value.loop.execute {
                        let life = me.value
                        life.receiving.filterEnded()
                        guard !life.isShutDown else { return }
                        if keep { life.hand(data, from: address, context: carried.value) }
                        life.deliverReceived()
                    }
                }
                return
            }
            var context: Any?
            let keep: Bool
            if let queue = filter.queue {
                let result = queue.sync {
                    var inner: Any?
                    let keep = filter.block(data, address, &inner)
                    return UncheckedSendable((keep, inner))
                }
                keep = result.value.0
                context = result.value.1
            } else {
                keep = filter.block(data, address, &context)
            }
            if keep { hand(data, from: address, context: context) }
        }
    }

    /// One datagram to the delegate; in receive-once mode that ends receiving.
    private func hand(_ data: Data, from address: Data, context: Any?) {
        let carried = UncheckedSendable(context)
        socket.deliver(life: life) { sock, delegate in
            delegate.udpSocket(sock, didReceive: data, fromAddress: address, withFilterContext: carried.value)
        }
        receiving.delivered()
    }
}

// Entry points hop to `loop`; every other member is touched on `loop` only.
extension UDPLife: @unchecked Sendable {}

/// One datagram's write: whichever of its completion and its timer comes first reports it.
private final class SendAttempt {
    var done = false
    var timer: Scheduled<Void>?
}

// Touched on the life's event loop only.
extension SendAttempt: @unchecked Sendable {}
