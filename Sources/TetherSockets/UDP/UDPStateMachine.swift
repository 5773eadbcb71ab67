import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The decisions of one ``GCDAsyncUdpSocket`` life (from its sockets' creation to their close), as a value: events in
/// (bind asked, a channel active or closed, send or connect asked, a name resolved, a filter's verdict, a write
/// done, a timer fired, receive asked, a datagram read, close asked), actions out (register or close a channel,
/// resolve, connect, write, run a filter, arm or cancel a timer, deliver a callback, end the life). It does no I/O:
/// ``UDPLife`` executes its actions on the event loop and feeds it the results, and tests drive it directly.
///
/// Packets (sends and connects) are processed one at a time in the order they were asked for; a packet's callback
/// is delivered before the next packet starts. Receiving follows ``GCDAsyncUdpSocket/ReceiveQueue``.
struct UDPStateMachine {
    typealias Family = NIOBSDSocket.ProtocolFamily

    /// Where the life stands; the packet in flight (if any) and whether to close after sends are part of it.
    enum State {
        /// Sockets made and bound; not handed to NIO yet.
        case unbound(closesAfterSending: Bool)
        /// Channels registering with NIO; `pending` of them have not answered yet. Packets wait.
        case binding(pending: Int, closesAfterSending: Bool)
        /// Ready; no packet in flight (and so none queued).
        case idle
        /// Ready; one packet in flight.
        case busy(Step, closesAfterSending: Bool)
        /// Ended (its end reported, or shut down): late answers are ignored, channels that turn up are closed.
        case closed
    }

    /// The stage of the packet in flight.
    enum Step {
        /// Waiting for the lookup of the packet's name.
        case resolving(UDPSendQueue.Entry)
        /// The channel connects to the address.
        case connecting(SocketAddress)
        /// The send filter decides on the datagram.
        case filtering(UDPOutgoing, to: SocketAddress)
        /// The engine has the datagram.
        case writing(Write)
    }

    /// A datagram handed to the engine: whichever of its completion and its timer comes first reports it.
    struct Write {
        var id: UInt64
        var tag: Int
        var timeout: TimeInterval
        var isTimerArmed = false
    }

    /// What the machine reads from the socket's configuration (the life refreshes it before each event).
    struct Settings {
        var preference = GCDAsyncUdpSocket.Preference.neutral
        var hasSendFilter = false
        var hasReceiveFilter = false
        var maxReceiveIPv4 = Int(UInt16.max)
        var maxReceiveIPv6 = Int(UInt16.max)
    }

    /// What happened: a face's call, or an answer of the I/O an action started.
    enum Event {
        /// The life starts: hand `families` bound descriptors to NIO.
        case bindAsked(families: Int)
        /// A channel registered; `stillWanted` is false when the face closed its family (or the life) meanwhile.
        case channelActive(Family, stillWanted: Bool)
        /// A channel failed to register.
        case channelFailed(Family, any Error)
        /// A channel closed; `error` is the fatal error that closed it.
        case channelClosed(Family, error: (any Error)?)
        /// The face closes one family (after connect or a multicast join picked the other).
        case familyCloseAsked(Family)
        /// A datagram to queue.
        case sendAsked(UDPOutgoing)
        /// A connect to queue behind the sends asked for before it.
        case connectAsked(UDPDestination)
        /// The lookup of packet `id`'s name answered.
        case resolved(id: UInt64, Result<[SocketAddress], any Error>)
        case connectCompleted(Result<Void, any Error>)
        case sendFilterAnswered(keep: Bool)
        /// The engine returned from write `id` (its completion may have come already).
        case writeStarted(id: UInt64)
        case writeCompleted(id: UInt64, Result<Void, any Error>)
        case timerFired(id: UInt64)
        case receiveAsked(GCDAsyncUdpSocket.ReceiveMode)
        case datagramReceived(AddressedEnvelope<ByteBuffer>)
        case receiveFilterAnswered(keep: Bool, data: Data, from: SocketAddress, context: Any?)
        case closeAfterSendingAsked
        case closeAsked
    }

    /// What ``UDPLife`` must do, in the order returned.
    enum Action {
        /// Register every bound descriptor with NIO.
        case registerChannels
        /// Forget this family's engine and close its channel.
        case closeChannel(Family)
        /// Mirror ``acceptsDirectSends``, ``families`` and ``connected`` into the fast path.
        case publishFastPath
        /// Read from the kernel, or stop.
        case setReads(Bool)
        /// Start looking up the name of packet `id` (when it is queued).
        case resolve(id: UInt64, host: String, port: Int)
        /// Feed the lookup's answer back as `.resolved(id:)`.
        case awaitResolution(id: UInt64)
        case connect(SocketAddress)
        case runSendFilter(UDPOutgoing, to: SocketAddress)
        case write(id: UInt64, tag: Int, data: Data, to: SocketAddress)
        case armTimer(id: UInt64, seconds: TimeInterval)
        case cancelTimer(id: UInt64)
        case runReceiveFilter(Data, from: SocketAddress)
        case deliver(Delivery)
        /// Report the life's end to the face (which shuts it down).
        case endLife(GCDAsyncUdpSocketError?)
        /// A send reached this life after it ended (asked for right after `closeAfterSending` emptied the queue):
        /// hand it back to the face, which sends it in a new life, as the original opened a new socket.
        case sendAfterLife(UDPOutgoing)
        /// A connect reached this life after it ended: hand it back to the face, which connects in a new life (or
        /// answers `didNotConnect`), as the original's next connect opened a new socket.
        case connectAfterLife(UDPDestination)
        /// Close every channel; drop lookups and timers.
        case shutDown
    }

    /// A callback for the delegate.
    enum Delivery {
        case connected(SocketAddress)
        case notConnected(GCDAsyncUdpSocketError)
        case sent(tag: Int)
        case notSent(tag: Int, GCDAsyncUdpSocketError)
        case received(Data, from: SocketAddress, context: Any?)
    }

    // Changed by the machine's own methods only (some live in its extensions' files, hence no `private(set)`).
    var state = State.unbound(closesAfterSending: false)
    /// The families whose channel is registered and open.
    var families: Set<Family> = []
    var connected: SocketAddress?
    var sends = UDPSendQueue()
    var receiving = GCDAsyncUdpSocket.ReceiveQueue()
    /// Whether the engines were last told to read.
    var readsOn = false
    var lastWrite: UInt64 = 0
    /// Set by the life before each event.
    var settings = Settings()

    /// Whether sends may skip the loop: ready and not closing after sends.
    var acceptsDirectSends: Bool {
        switch state {
        case .idle, .busy(_, closesAfterSending: false): true
        default: false
        }
    }

    /// Ready: every channel registered, the life not ended.
    var isReady: Bool {
        switch state {
        case .idle, .busy: true
        case .unbound, .binding, .closed: false
        }
    }

    // MARK: events

    /// Takes one event; returns what to do, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .bindAsked(let count): return bindAsked(count)
        case .channelActive(let family, let stillWanted): return channelActive(family, stillWanted: stillWanted)
        case .channelFailed(let family, let error): return channelFailed(family, error)
        case .channelClosed(let family, let error): return channelClosed(family, error: error)
        case .familyCloseAsked(let family): return familyCloseAsked(family)
        case .sendAsked(let outgoing): return queue(.send(outgoing))
        case .connectAsked(let target): return queue(.connect(target))
        case .resolved(let id, let result): return resolved(id, result)
        case .connectCompleted(let result): return connectCompleted(result)
        case .sendFilterAnswered(let keep): return sendFilterAnswered(keep)
        case .writeStarted(let id): return writeStarted(id)
        case .writeCompleted(let id, let result): return writeCompleted(id, result)
        case .timerFired(let id): return timerFired(id)
        case .receiveAsked(let mode): return receiveAsked(mode)
        case .datagramReceived(let datagram): return datagramReceived(datagram)
        case .receiveFilterAnswered(let keep, let data, let address, let context):
            return receiveFilterAnswered(keep, data: data, from: address, context: context)
        case .closeAfterSendingAsked: return closeAfterSendingAsked()
        case .closeAsked: return closeAsked()
        }
    }

    private mutating func bindAsked(_ count: Int) -> [Action] {
        // A life binds once: the face refuses a second bind (or a bind after connect) before it reaches the loop.
        guard case .unbound(let closing) = state else { return [] }
        state = .binding(pending: count, closesAfterSending: closing)
        return count > 0 ? [.registerChannels] : becomeReady(closing: closing)
    }

    private mutating func channelActive(_ family: Family, stillWanted: Bool) -> [Action] {
        guard case .binding(let pending, let closing) = state else { return [.closeChannel(family)] }
        var actions: [Action] = []
        if stillWanted { families.insert(family) } else { actions.append(.closeChannel(family)) }
        state = .binding(pending: pending - 1, closesAfterSending: closing)
        if pending - 1 == 0 { actions += becomeReady(closing: closing) }
        return actions
    }

    private mutating func channelFailed(_ family: Family, _ error: any Error) -> [Action] {
        guard case .binding = state else { return [.closeChannel(family)] }
        state = .closed
        return [.closeChannel(family), .endLife(.wrapping(error, function: "register"))]
    }

    private mutating func becomeReady(closing: Bool) -> [Action] {
        state = .idle
        return updateReads(force: true) + [.publishFastPath] + next(closing: closing)
    }

    private mutating func channelClosed(_ family: Family, error: (any Error)?) -> [Action] {
        // A channel closed by request (close, connect, a multicast join) left the set already.
        guard families.contains(family), !isClosed else { return [] }
        families.remove(family)
        state = .closed
        // A socket closed under us: the life ends.
        return [
            .closeChannel(family), .publishFastPath, .endLife(error.map { .wrapping($0, function: "recvmsg") }),
        ]
    }

    private mutating func familyCloseAsked(_ family: Family) -> [Action] {
        families.remove(family)
        return isClosed ? [.closeChannel(family)] : [.closeChannel(family), .publishFastPath]
    }

    private var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    private mutating func closeAfterSendingAsked() -> [Action] {
        switch state {
        case .unbound:
            state = .unbound(closesAfterSending: true)
            return []
        case .binding(let pending, _):
            state = .binding(pending: pending, closesAfterSending: true)
            return [.publishFastPath]
        case .idle:
            return next(closing: true)
        case .busy(let step, _):
            state = .busy(step, closesAfterSending: true)
            return [.publishFastPath]
        case .closed:
            return []
        }
    }

    private mutating func closeAsked() -> [Action] {
        state = .closed
        families.removeAll()
        sends.removeAll()
        receiving.removeAll()
        readsOn = false
        return [.shutDown]
    }
}
