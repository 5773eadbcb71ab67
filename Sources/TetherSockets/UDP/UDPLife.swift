import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import TetherConcurrency

/// One life of an ``GCDAsyncUdpSocket`` on its event loop: executes the actions of its ``UDPStateMachine`` (registers
/// channels, resolves names, connects, writes, runs filters on their queues, arms timers, delivers callbacks) and
/// feeds the results back to it as events. It decides nothing itself. Every member is touched on `loop` only,
/// except the entry points, which hop there.
final class UDPLife: UDPEngineOwner {
    /// Held weakly, as the original's queue did not keep its socket alive: a socket dropped without `close()` is
    /// deinitialized, and its `deinit` ends this life (no delegate callback is owed then).
    weak var socket: GCDAsyncUdpSocket?
    let life: UInt64
    let loop: any EventLoop
    /// Direct sends from the sending thread while the queue is idle; mirrors the machine's state.
    let fastPath = UDPFastPath()
    /// The datagrams the kernel took whose `didSendDataWithTag` is not queued yet (``UDPSentLedger``).
    let sentLedger = UDPSentLedger()

    private var machine = UDPStateMachine()
    private var descriptors: [(NIOBSDSocket.ProtocolFamily, Int32)] = []
    private var engines: [NIOBSDSocket.ProtocolFamily: UDPEngine] = [:]
    private var channels: [NIOBSDSocket.ProtocolFamily: any Channel] = [:]
    private var lookups: [UInt64: EventLoopFuture<[SocketAddress]>] = [:]
    private var timer: (id: UInt64, task: Scheduled<Void>)?
    /// The write waiting in a gate for room in the kernel, which its timeout withdraws.
    private var waitingWrite: (id: UInt64, family: NIOBSDSocket.ProtocolFamily, token: UInt64)?
    /// Each family's send gate, made when the descriptors are adopted: the one way to a descriptor NIO owns, from any
    /// thread (``withDescriptor(_:_:)``).
    private let gates = LockedBox<[NIOBSDSocket.ProtocolFamily: UDPSendGate]>([:])
    /// Events fed while the machine's actions run wait here: one event's actions all run before the next event.
    private var events = CircularBuffer<UDPStateMachine.Event>()
    private var isHandling = false
    /// The last datagram's sender and its `sockaddr` bytes (``senderData(_:)``).
    private var lastSender: (address: SocketAddress, data: Data)?
    private var sendFilter: GCDAsyncUdpSocket.SendFilter?
    /// The socket's count of `close()` calls when the packet being fed was asked for.
    private var closesWhenAsked: UInt64 = 0
    private var receiveFilter: GCDAsyncUdpSocket.ReceiveFilter?

    init(socket: GCDAsyncUdpSocket, life: UInt64, loop: any EventLoop) {
        self.socket = socket
        self.life = life
        self.loop = loop
    }

    /// Runs `body` on the loop. Until it has run, sends take the loop's path too: an operation asked for before a
    /// send (pausing reception, closing after sends, …) takes effect before it, as in the original's one queue.
    private func onLoop(_ body: @escaping (UDPLife) -> Void) {
        // Sendable: `body` runs on the loop only, and the life is touched there only.
        let work = UncheckedSendableBox(body)
        fastPath.packetQueued()
        loop.execute {
            work.value(self)
            self.fastPath.packetFinished()
        }
    }

    // MARK: entry points (any thread)

    /// Hands bound descriptors to NIO datagram channels running this life's engines.
    func adopt(ipv4: Int32?, ipv6: Int32?) {
        gates.withLock { gates in
            if let ipv4 { gates[.inet] = UDPSendGate(descriptor: ipv4) }
            if let ipv6 { gates[.inet6] = UDPSendGate(descriptor: ipv6) }
        }
        // On the loop, never inline: a registration completing at once would report back into the socket's lock.
        onLoop { me in
            me.descriptors = [(.inet, ipv4), (.inet6, ipv6)].compactMap { family, fd in fd.map { (family, $0) } }
            me.feed(.bindAsked(families: me.descriptors.count))
        }
    }

    /// Closes one family's channel (never inline: its close reports back into the socket's lock).
    func closeFamily(_ family: NIOBSDSocket.ProtocolFamily) {
        onLoop { me in me.feed(.familyCloseAsked(family)) }
    }

    /// Under the socket's lock, as the life ends: closes the gates (a `sendto` under way finishes first; none starts
    /// afterwards) and returns the datagrams the kernel took and not yet reported, oldest first, with the promises
    /// of those that waited in a gate (never sent) for the caller to fail once it holds no lock.
    func stopSending() -> (sent: [Int], neverSent: [EventLoopPromise<Void>]) {
        let neverSent = gates.withLock { Array($0.values) }.flatMap { $0.stop() }
        return (sentLedger.takeAll(), neverSent)
    }

    /// Ends the life: channels closed, queued sends and undelivered datagrams dropped.
    func shutdown() {
        onLoop { me in me.feed(.closeAsked) }
    }

    /// Queues `packet`, asked for when the socket had seen `closes` calls of `close()`. Called under the socket's
    /// lock, while this life is current: packets reach the loop in the order they were asked for, and before the
    /// life's end.
    func enqueue(_ packet: UDPSendQueue.Packet, closes: UInt64) {
        fastPath.packetQueued()
        onLoop { me in me.take(packet, closes: closes) }
    }

    /// Under the socket's lock: a packet that an ended life of the same socket handed back is on its way to
    /// ``feedHandedBack(_:closes:)`` (direct sends wait for it).
    func announceHandedBack() {
        fastPath.packetQueued()
    }

    /// On the loop, once the socket's lock is released: feeds a packet that an ended life handed back (announced
    /// with ``announceHandedBack()``) now, ahead of every packet queued on the loop after it.
    func feedHandedBack(_ packet: UDPSendQueue.Packet, closes: UInt64) {
        loop.preconditionInEventLoop()
        take(packet, closes: closes)
    }

    private func take(_ packet: UDPSendQueue.Packet, closes: UInt64) {
        // Read by a `sendAfterLife` or `connectAfterLife` this event produces.
        closesWhenAsked = closes
        switch packet {
        case .send(let outgoing): feed(.sendAsked(outgoing))
        case .connect(let target): feed(.connectAsked(target))
        }
    }

    func closeAfterSending() {
        onLoop { me in me.feed(.closeAfterSendingAsked) }
    }

    func setReceiveMode(_ newMode: GCDAsyncUdpSocket.ReceiveMode) {
        onLoop { me in me.feed(.receiveAsked(newMode)) }
    }

    /// Runs `body` with this life's descriptor of `family` (the gate's duplicate, open while `body` runs); nil when
    /// NIO closed that socket already (its descriptor number may belong to another socket by now).
    func withDescriptor<T>(_ family: NIOBSDSocket.ProtocolFamily, _ body: (Int32) throws -> T) rethrows -> T? {
        guard let gate = gates.withLock({ $0[family] }) else { return nil }
        return try gate.withDescriptor(body)
    }

    /// The life's channels, read on its loop (tests close one from NIO's side with it).
    func currentChannels() -> EventLoopFuture<[NIOBSDSocket.ProtocolFamily: any Channel]> {
        loop.submit { self.channels }
    }

    // MARK: engine reports (on the loop)

    func engine(_ engine: UDPEngine, didReceive datagram: AddressedEnvelope<ByteBuffer>) {
        feed(.datagramReceived(datagram))
    }

    func engineDidClose(_ engine: UDPEngine, error: (any Error)?) {
        guard let family = engines.first(where: { $0.value === engine })?.key else { return }
        feed(.channelClosed(family, error: error))
    }

    // MARK: the machine

    /// Gives `event` to the machine and executes its actions; an event fed meanwhile waits its turn.
    private func feed(_ event: UDPStateMachine.Event) {
        events.append(event)
        guard !isHandling else { return }
        isHandling = true
        defer { isHandling = false }
        refreshSettings()
        while let next = events.popFirst() {
            for action in machine.handle(next) { execute(action) }
        }
    }

    private func refreshSettings() {
        guard let socket else { return }
        let (settings, send, receive) = socket.state.withLock { s in
            (
                UDPStateMachine.Settings(
                    preference: s.configuration.preference,
                    hasSendFilter: s.sendFilter != nil,
                    hasReceiveFilter: s.receiveFilter != nil,
                    maxReceiveIPv4: Int(s.configuration.maxReceiveIPv4),
                    maxReceiveIPv6: Int(s.configuration.maxReceiveIPv6)
                ), s.sendFilter, s.receiveFilter
            )
        }
        machine.settings = settings
        sendFilter = send
        receiveFilter = receive
    }

    private func execute(_ action: UDPStateMachine.Action) {
        switch action {
        case .registerChannels: registerChannels()
        case .closeChannel(let family):
            engines[family] = nil
            channels.removeValue(forKey: family)?.close(promise: nil)
        case .publishFastPath:
            fastPath.publish(
                isOpen: machine.acceptsDirectSends,
                gates: engines.filter { machine.families.contains($0.key) }.mapValues(\.gate),
                connected: machine.connected
            )
        case .setReads(let wants):
            for engine in engines.values where engine.wantsReads != wants { engine.wantsReads = wants }
        case .resolve(let id, let host, let port):
            lookups[id] = HostResolver.resolve(host: host, port: port, on: loop)
        case .awaitResolution(let id):
            let lookup = lookups.removeValue(forKey: id) ?? loop.makeSucceededFuture([])
            lookup.hop(to: loop).whenComplete { result in self.feed(.resolved(id: id, result)) }
        case .connect(let address): connect(to: address)
        case .runSendFilter(let outgoing, let address): runSendFilter(outgoing, to: address)
        case .write(let id, let tag, let data, let address): write(id: id, tag: tag, data, to: address)
        case .armTimer(let id, let seconds):
            // No timeout (NaN, infinite, beyond the engine's longest timer): no timer.
            guard let delay = TimeoutValue.timeout(seconds) else { return }
            let task = loop.scheduleTask(in: delay) {
                self.sendTimedOut(id)
            }
            timer = (id, task)
        case .cancelTimer(let id):
            guard let timer, timer.id == id else { return }
            timer.task.cancel()
            self.timer = nil
        case .runReceiveFilter(let data, let address): runReceiveFilter(data, from: address)
        case .deliver(let delivery): deliver(delivery)
        case .endLife(let error): socket?.lifeEnded(life, error: error)
        case .sendAfterLife(let outgoing): socket?.sendAgain(outgoing, endedLife: life, closes: closesWhenAsked)
        case .connectAfterLife(let target): socket?.connectAgain(target, endedLife: life, closes: closesWhenAsked)
        case .shutDown: shutDown()
        }
    }

    private func registerChannels() {
        for (family, fd) in descriptors {
            UDPEngine.configure(DatagramBootstrap(group: loop))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard let gate = self.gates.withLock({ $0[family] }) else {
                            throw ChannelError.ioOnClosedChannel
                        }
                        let engine = UDPEngine(owner: self, gate: gate)
                        self.engines[family] = engine
                        try channel.pipeline.syncOperations.addHandler(engine)
                    }
                }
                .withBoundSocket(fd)
                .hop(to: loop)
                .whenComplete { result in self.registered(family, result: result) }
        }
    }

    private func registered(_ family: NIOBSDSocket.ProtocolFamily, result: Result<any Channel, any Error>) {
        switch result {
        case .success(let channel):
            let stillWanted =
                socket?.state.withLock { s in
                    guard let sockets = s.sockets, sockets.life == life else { return false }
                    return family == .inet ? sockets.fd4 != nil : sockets.fd6 != nil
                } ?? false
            channels[family] = channel
            socket?.logger?.debug("bound", metadata: ["local": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
            feed(.channelActive(family, stillWanted: stillWanted))
        case .failure(let error):
            gates.withLock { $0[family] }?.close()
            feed(.channelFailed(family, error))
        }
    }

    private func shutDown() {
        fastPath.publish(isOpen: false, gates: [:], connected: nil)
        lookups.removeAll()
        timer?.task.cancel()
        timer = nil
        waitingWrite = nil
        engines.removeAll()
        for channel in channels.values { channel.close(promise: nil) }
        channels.removeAll()
        // Also the gate of a channel never registered; closing one twice does nothing.
        for gate in gates.withLock({ $0.values }) { gate.close() }
    }

    private func connect(to address: SocketAddress) {
        guard let channel = channels[address.protocol] else {
            let error = GCDAsyncUdpSocketError.other("No socket for the address family of \(address)")
            feed(.connectCompleted(.failure(error)))
            return
        }
        channel.connect(to: address).hop(to: loop).whenComplete { result in
            self.socket?.logger?.debug("connected", metadata: ["remote": "\(address)", "result": "\(result)"])
            self.feed(.connectCompleted(result))
        }
    }

    private func write(id: UInt64, tag: Int, _ data: Data, to address: SocketAddress) {
        let promise = loop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { result in
            if self.waitingWrite?.id == id { self.waitingWrite = nil }
            self.feed(.writeCompleted(id: id, result))
        }
        guard let engine = engines[address.protocol] else {
            promise.fail(ChannelError.ioOnClosedChannel)
            return
        }
        var buffer = ByteBufferAllocator().buffer(capacity: data.count)
        buffer.writeBytes(data)
        let ledger = sentLedger
        let envelope = AddressedEnvelope(remoteAddress: address, data: buffer)
        if let token = engine.send(envelope, promise: promise, whenTaken: { ledger.noteSent(tag) }) {
            waitingWrite = (id, address.protocol, token)
        }
        feed(.writeStarted(id: id))
    }

    /// The send timer of write `id` fired: the datagram is withdrawn from its gate and reported timed out, unless
    /// the kernel took or refused it already (then its completion, on its way, reports it). A datagram reported
    /// not sent is never sent.
    private func sendTimedOut(_ id: UInt64) {
        guard let waiting = waitingWrite, waiting.id == id,
            let promise = engines[waiting.family]?.gate.withdraw(waiting.token)
        else { return }
        waitingWrite = nil
        feed(.timerFired(id: id))
        // The machine has moved on: this completion finds no write with this id.
        promise.fail(ChannelError.ioOnClosedChannel)
    }

    /// Runs the send filter: inline without a queue, else asynchronously on its queue (never `queue.sync` from the
    /// loop); its verdict comes back as an event. Sends wait for it, so their order is kept.
    private func runSendFilter(_ outgoing: UDPOutgoing, to address: SocketAddress) {
        guard let filter = sendFilter else {
            feed(.sendFilterAnswered(keep: true))
            return
        }
        let addressData = address.sockaddrData
        guard let queue = filter.queue else {
            feed(.sendFilterAnswered(keep: filter.block(outgoing.data, addressData, outgoing.tag)))
            return
        }
        let (data, tag) = (outgoing.data, outgoing.tag)
        queue.async {
            let keep = filter.block(data, addressData, tag)
            self.loop.execute { self.feed(.sendFilterAnswered(keep: keep)) }
        }
    }

    /// Runs the receive filter as the send filter; receiving holds the next datagram until the verdict is back.
    private func runReceiveFilter(_ data: Data, from address: SocketAddress) {
        let addressData = address.sockaddrData
        guard let filter = receiveFilter else {
            feed(.receiveFilterAnswered(keep: true, data: data, from: address, context: nil))
            return
        }
        guard let queue = filter.queue else {
            var context: Any?
            let keep = filter.block(data, addressData, &context)
            feed(.receiveFilterAnswered(keep: keep, data: data, from: address, context: context))
            return
        }
        queue.async {
            var context: Any?
            let keep = filter.block(data, addressData, &context)
            // Sendable: the context is made on the filter's queue and then only used by the delegate.
            let carried = UncheckedSendableBox(context)
            self.loop.execute {
                self.feed(.receiveFilterAnswered(keep: keep, data: data, from: address, context: carried.value))
            }
        }
    }

    /// The `sockaddr` bytes of a datagram's sender; the last sender's are kept, so that a peer that sends again
    /// (the usual case) costs no new `Data`.
    func senderData(_ address: SocketAddress) -> Data {
        if let last = lastSender, last.address == address { return last.data }
        let data = address.sockaddrData
        lastSender = (address, data)
        return data
    }
}

// Sendable: the entry points only hop to `loop` (`onLoop`); every other member is touched on `loop` only.
extension UDPLife: @unchecked Sendable {}
