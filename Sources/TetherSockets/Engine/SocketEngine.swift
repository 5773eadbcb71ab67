import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import NIOTLS
import TetherConcurrency

/// The one engine under both faces: a channel handler that executes a ``TCPStateMachine``.
///
/// The machine holds the state (phase, TLS upgrade, read and write queues) and takes the decisions; this handler
/// turns NIO's events and the faces' requests into the machine's events, and its answers into I/O: writes and
/// flushes, `autoRead`, timers, the TLS handler, callbacks to the ``SocketEngineOwner`` (the face), and close.
///
/// Everything runs on one event loop. Reads complete on the loop and hand their result over once per completed
/// operation (never per chunk). Bytes are not consumed until a read completes, so a failed read (async face) loses
/// nothing and a closing error (delegate face) can carry every undelivered byte.
final class SocketEngine: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum OperationKind {
        case read
        case write
    }

    typealias Policy = EnginePolicy
    /// The async face's read continuation.
    typealias ReadContinuation = CheckedContinuation<ByteBuffer?, any Error>
    /// The async face's write continuation.
    typealias WriteContinuation = CheckedContinuation<Void, any Error>
    typealias Machine = TCPStateMachine<ReadContinuation, WriteContinuation>
    typealias ReadQueue = TCPReadQueue<ReadContinuation>
    typealias WriteQueue = TCPWriteQueue<WriteContinuation>

    /// Writes larger than this are handed to NIO in slices of this size, so that progress can be reported.
    static let progressSliceSize = 256 * 1024
    /// Buffered bytes past which, with no read waiting for them, the engine stops reading from the kernel.
    static let pauseThreshold = 256 * 1024

    let eventLoop: any EventLoop
    let policy: Policy
    let progress: LockedBox<ProgressSnapshot>
    private(set) weak var context: ChannelHandlerContext?
    var owner: (any SocketEngineOwner)?
    /// Every decision about this connection, in one box: behind its lock when a face shares it (the delegate face
    /// completes reads from bytes already buffered on its delegate queue, ``TCPStateMachine/readFromBuffer(_:)``),
    /// without it when the machine is the loop's alone (the async face). One allocation either way, and no second
    /// machine inline in the handler.
    let sharedMachine: LockedBox<Machine>
    /// Whether a face reaches the machine from other threads.
    let sharesMachine: Bool
    /// The machine: locked for the duration of each access when it is shared.
    var machine: Machine {
        @inline(__always) _read {
            if sharesMachine {
                yield sharedMachine.locked
            } else {
                yield sharedMachine.unlocked
            }
        }
        @inline(__always) _modify {
            if sharesMachine {
                yield &sharedMachine.locked
            } else {
                yield &sharedMachine.unlocked
            }
        }
    }

    /// Reads from the machine through its mutating accessor. A read through `machine`'s `_read` copies the whole
    /// machine (each buffer's reference retained and released: it showed in the ping-pong profile); `_modify` does
    /// not.
    @inline(__always)
    func peek<Result>(_ body: (inout Machine) -> Result) -> Result {
        body(&machine)
    }

    /// The read timer running, and the one the machine asked for when it was armed.
    var readTimer: (spec: ReadQueue.Timer, scheduled: Scheduled<Void>)?
    /// The write timer running, and the one the machine asked for when it was armed.
    var writeTimer: (spec: WriteQueue.Timer, scheduled: Scheduled<Void>)?
    /// Async face: the timers of tasks waiting for room in the window, by write id.
    var waitingTimers: [UInt64: Scheduled<Void>] = [:]
    /// Inside `channelRead`: completions queue their flush for `channelReadComplete`.
    var inReadLoop = false
    /// Handing admitted writes to the channel: their flush waits for the end of the batch.
    var isDraining = false
    /// `processReads` is running (a delegate called inline may queue reads: the running loop picks them up).
    var isProcessingReads = false
    /// Bytes arrived in this read batch and wait for `channelReadComplete` to serve the reads.
    var hasUnprocessedBytes = false
    /// Mirrors the channel's `autoRead` option (on from the start).
    var isAutoReading = true
    var flushPending = false
    /// The requested upgrade until the connection is secure (its settings, timeout and promise).
    var upgrade: TLSUpgrade?
    var tlsHandler: NIOSSLHandler?
    var tlsTimer: Scheduled<Void>?
    /// Async face: the write window shared with writing tasks (nil on the delegate face).
    var admission: WriteAdmission?
    /// Async face `close()`: the caller's promise and the linger timer, while accepted writes go out.
    var gracefulClose: (promise: EventLoopPromise<Void>, timer: Scheduled<Void>?)?
    /// How long `close()` waits for accepted writes to reach the kernel before closing anyway.
    var closeLinger: TimeAmount = .seconds(10)
    /// Keepalive, the idle detector and the heartbeat, when the face asked for any (`SocketEngine+Liveness`).
    var liveness: LivenessDriver?

    /// Set when the connection was never established and is being abandoned; a channel that arrives later closes.
    var isClosed: Bool { peek({ $0.isClosed }) }
    /// True once a TLS handshake completed (one upgrade per connection).
    var isSecure: Bool { peek({ $0.tls }) == .secured }

    init(eventLoop: any EventLoop, owner: any SocketEngineOwner, policy: Policy) {
        self.eventLoop = eventLoop
        self.owner = owner
        self.policy = policy
        self.sharedMachine = LockedBox(Machine(policy: policy))
        self.sharesMachine = policy.servesReadsOffLoop
        self.progress = LockedBox(ProgressSnapshot())
    }

    // MARK: channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        livenessJoinedPipeline()
        if peek({ $0.isClosed }) {
            context.close(promise: nil)
        } else if context.channel.isActive {
            activate()
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        activate()
        context.fireChannelActive()
    }

    private func activate() {
        guard machine.activate() else { return }
        owner?.engineDidActivate(self)
        guard peek({ $0.isActive }) else { return }
        startLiveness()
        sendHeldWrites()
        startCurrentWrite()
        processReads()
        startHandshakeIfReady()
    }

    /// Buffers the bytes; the reads they serve are served once the read batch ends (`channelReadComplete`), so
    /// that the several reads NIO makes per wake-up (up to 256 KiB each) reach a waiting read as one delivery: one
    /// hop to a delegate queue or one resumed task, not one per socket read.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard peek({ $0.isActive }) else { return }
        machine.reads.received(unwrapInboundIn(data))
        hasUnprocessedBytes = true
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if hasUnprocessedBytes { livenessRead() }
        serveArrivedBytes()
        if flushPending {
            flushPending = false
            context.flush()
        }
        requestMoreDataIfNeeded()
        context.fireChannelReadComplete()
    }

    /// Serves the reads that this batch's bytes satisfy; every event after the bytes calls it first, so that
    /// nothing overtakes them (an end of input, an error, a close, a finished handshake).
    func serveArrivedBytes() {
        guard hasUnprocessedBytes else { return }
        hasUnprocessedBytes = false
        inReadLoop = true
        processReads()
        inReadLoop = false
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        serveArrivedBytes()
        if let event = event as? ChannelEvent, event == .inputClosed {
            machine.reads.endOfInput()
            processReads()
        } else if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            handshakeCompleted(negotiatedProtocol: negotiated)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        serveArrivedBytes()
        close(error: machine.channelError(error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        serveArrivedBytes()
        switch machine.channelEnded() {
        case .close(let error):
            close(error: error)
        case .serveBufferedReads:
            // Async face, both directions ended cleanly (the peer closed after our half-close): reads go on serving
            // the buffered bytes, then the end of the stream; writes fail.
            admission?.close(.closedByPeer)
            processReads()
        case .serveBufferedReadsThenClose:
            processReads()
            close(error: .closedByPeer)
        case .ignore:
            break
        }
        context.fireChannelInactive()
    }

    // MARK: flushing

    /// Flushes now when a flush is owed.
    func flushIfNeeded() {
        guard flushPending else { return }
        flushPending = false
        context?.flush()
    }

    // MARK: closing

    /// Ends the connection. Queued operations end with it: delegate-face tags and undelivered bytes ride on the
    /// error; awaiting tasks are resumed with the error (or `.closed` for a requested close).
    func close(error: GCDAsyncSocketError?) {
        let hadTLSHandler = tlsHandler != nil
        var error = error
        // Whether the connection ever came up tells a failed connect from a lost connection.
        error?.disconnection = peek({ $0.isWaitingForChannel }) ? .notConnected : .connectionLost
        guard machine.close(error: error) else { return }
        stopLiveness()
        admission?.close(error ?? .closedLocally)
        readTimer?.scheduled.cancel()
        readTimer = nil
        writeTimer?.scheduled.cancel()
        writeTimer = nil
        tlsTimer?.cancel()
        tlsTimer = nil
        // NIOSSL closes gracefully: close_notify, then it waits for the peer's. With remote half-closure allowed,
        // the peer's answer (close_notify and FIN) left the channel open until NIOSSL's 5 s shutdown timeout,
        // holding every closed connection's memory that long; without it, the peer's FIN ends the channel.
        // The peer's close_notify comes behind whatever it sent before it: reading paused for back-pressure (a full
        // buffer and no read waiting) would leave it unread, so NIOSSL would wait out its shutdown timeout and then
        // close with those bytes unread (a reset). Reading resumes; what arrives is discarded (the engine is closed).
        if hadTLSHandler, let context {
            try? context.channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            if !isAutoReading {
                isAutoReading = true
                machine.isReadingPaused = false
                try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
            }
        }
        // The handler may hold closures that capture this engine (manual trust): let go of it.
        tlsHandler = nil
        if let pending = upgrade {
            upgrade = nil
            pending.promise?.fail(error ?? GCDAsyncSocketError.closedLocally)
        }
        var reported = error
        if reported != nil {
            reported?.pendingReadTags = peek({ $0.reads.pendingTags })
            reported?.pendingWriteTags = peek({ $0.writes.pendingTags })
            let unread = machine.reads.takeBuffer()
            if unread.readableBytes > 0 {
                reported?.unreadData = Data(unread.readableBytesView)
            }
        }
        let taskError = error ?? GCDAsyncSocketError.closedLocally
        for waiter in machine.reads.removeAll() { fail(waiter, with: taskError) }
        for timer in waitingTimers.values { timer.cancel() }
        waitingTimers.removeAll()
        for task in machine.writes.removeAll() {
            admission?.endSlowWrite()
            task.resume(throwing: taskError)
        }
        if let graceful = gracefulClose {
            gracefulClose = nil
            graceful.timer?.cancel()
            if let error { graceful.promise.fail(error) } else { graceful.promise.succeed(()) }
        }
        _ = machine.reads.takeBuffer()
        progress.withLock { $0 = ProgressSnapshot() }
        let owner = self.owner
        self.owner = nil
        owner?.engineDidClose(self, error: reported)
        if let context {
            context.flush()
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension SocketEngine: Sendable {}
