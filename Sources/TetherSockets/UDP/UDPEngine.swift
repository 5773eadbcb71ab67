import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a UDP engine reports to the face that owns it, on the channel's event loop.
protocol UDPEngineOwner: AnyObject {
    /// One datagram arrived.
    func engine(_ engine: UDPEngine, didReceive datagram: AddressedEnvelope<ByteBuffer>)
    /// The channel closed; `error` is the fatal error that closed it, nil for a requested close.
    func engineDidClose(_ engine: UDPEngine, error: (any Error)?)
}

/// The datagram engine under both UDP faces: a channel handler that reads from the socket only while its owner
/// wants datagrams (`autoRead` is off, so a slow consumer leaves excess datagrams to the kernel). It never writes
/// through NIO: every datagram goes through ``UDPSendGate`` (also from other threads), which sends it at once or keeps
/// it until the kernel has room, and fails a refused datagram alone (NIO's own write path closes the channel on most
/// per-datagram errors, and cannot take back a datagram it holds).
final class UDPEngine: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    /// Fixed receive buffer: every datagram fits (65,507 bytes over IPv4, 65,527 over IPv6).
    static let receiveBufferSize = 65_536

    private(set) var context: ChannelHandlerContext?
    private weak var owner: (any UDPEngineOwner)?
    private var readRequested = false
    private var lastError: (any Error)?
    /// Whether the owner wants datagrams now; setting it to true issues a read.
    var wantsReads = false {
        didSet { if wantsReads { requestRead() } }
    }

    /// Every send, from the loop or (async face) from the sending task's thread; also the one way to the descriptor.
    let gate: UDPSendGate

    init(owner: any UDPEngineOwner, gate: UDPSendGate) {
        self.owner = owner
        self.gate = gate
    }

    /// The channel options both faces use.
    static func configure(_ bootstrap: DatagramBootstrap) -> DatagramBootstrap {
        bootstrap
            .channelOption(.autoRead, value: false)
            .channelOption(.maxMessagesPerRead, value: 16)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: receiveBufferSize))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive, wantsReads { requestRead() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        if wantsReads { requestRead() }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readRequested = false
        owner?.engine(self, didReceive: unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readRequested = false
        if wantsReads { requestRead() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        lastError = error
        // An ICMP error for a connected socket (ECONNREFUSED) sets the socket's pending error; NIO reads it when the
        // socket reports it and leaves the channel open. Without NIO the kernel would fail the next send with it,
        // so that is where it goes. A fatal error is followed by channelInactive, which reports it.
        if context.channel.isActive, let io = error as? IOError, io.errnoCode == ECONNREFUSED {
            gate.setPendingError(io.errnoCode)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        gate.close()
        let error = lastError
        owner?.engineDidClose(self, error: error)
        context.fireChannelInactive()
    }

    /// Sends one datagram; `promise` completes when the kernel took it or refused it (with an `IOError`). Returns the
    /// number that withdraws it from the gate when it waits there (``UDPSendGate/withdraw(_:)``). `whenTaken` runs
    /// under the gate's lock when the kernel takes it.
    @discardableResult
    func send(
        _ envelope: AddressedEnvelope<ByteBuffer>,
        promise: EventLoopPromise<Void>,
        whenTaken: (@Sendable () -> Void)? = nil
    ) -> UInt64? {
        guard let context, context.channel.isActive else {
            promise.fail(ChannelError.ioOnClosedChannel)
            return nil
        }
        switch gate.send(envelope, whenTaken: whenTaken, queueWith: { promise }) {
        case .sent: promise.succeed()
        case .failed(let code): promise.fail(IOError(errnoCode: code, reason: "sendto"))
        case .closed: promise.fail(ChannelError.ioOnClosedChannel)
        case .queued(let token): return token
        }
        return nil
    }

    private func requestRead() {
        guard let context, context.channel.isActive, !readRequested else { return }
        readRequested = true
        context.read()
    }
}

// A channel handler lives on its channel's event loop.
@available(*, unavailable)
extension UDPEngine: Sendable {}
