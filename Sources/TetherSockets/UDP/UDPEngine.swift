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
/// wants datagrams (`autoRead` is off, so a slow consumer leaves excess datagrams to the kernel), and writes
/// datagrams with a promise each, so that one send's failure is reported to that send only.
///
/// Sends go straight to `sendto` (through ``UDPSendGate``, also from other threads) while nothing waits in NIO's
/// write buffer; only a full socket buffer (`EAGAIN`) hands a datagram to NIO, which writes it when the socket is
/// writable again. This is how every refused send (`EMSGSIZE`, `EACCES`, `ECONNREFUSED`, `ENETUNREACH`, …) fails
/// that send alone: NIO's own write path closes the channel on most of those errors.
final class UDPEngine: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

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

    let descriptor: Int32
    /// Direct sends, from the loop or (async face) from the sending task's thread.
    let gate: UDPSendGate

    init(owner: any UDPEngineOwner, descriptor: Int32) {
        self.owner = owner
        self.descriptor = descriptor
        self.gate = UDPSendGate(descriptor: descriptor)
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

    /// Sends one datagram; `promise` completes when the kernel took it or refused it (with an `IOError`).
    func send(_ envelope: AddressedEnvelope<ByteBuffer>, promise: EventLoopPromise<Void>?) {
        guard let context, context.channel.isActive else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch gate.send(envelope) {
        case .sent: promise?.succeed()
        case .failed(let code): promise?.fail(IOError(errnoCode: code, reason: "sendto"))
        case .closed: promise?.fail(ChannelError.ioOnClosedChannel)
        case .queue: queueInNIO(envelope, promise: promise)
        }
    }

    /// The socket buffer is full (or datagrams wait already): NIO keeps the datagram, in order, until the socket is
    /// writable. Called after the gate answered `.queue`.
    func queueInNIO(_ envelope: AddressedEnvelope<ByteBuffer>, promise: EventLoopPromise<Void>?) {
        let gate = self.gate
        guard let context, context.channel.isActive else {
            gate.queuedDatagramDone()
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { result in
            gate.queuedDatagramDone()
            promise?.completeWith(result)
        }
        context.writeAndFlush(wrapOutboundOut(envelope), promise: written)
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
