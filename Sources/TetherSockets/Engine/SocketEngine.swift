import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import NIOTLS

/// The one engine under both faces: a channel handler that owns the read queue (available / to length / to
/// separator), the write queue, their timeouts and progress.
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

    private enum State {
        case waitingForChannel
        case active
        case closed
    }

    /// Writes larger than this are handed to NIO in slices of this size, so that progress can be reported.
    static let progressSliceSize = 256 * 1024
    /// Buffered bytes past which, with no read waiting for them, the engine stops reading from the kernel.
    static let pauseThreshold = 256 * 1024

    let eventLoop: any EventLoop
    let policy: Policy
    let progress: NIOLockedValueBox<ProgressSnapshot>
    private(set) weak var context: ChannelHandlerContext?
    private var owner: (any SocketEngineOwner)?
    private var state = State.waitingForChannel
    /// The read side: buffered bytes, queued reads, their decisions.
    private var reads: TCPReadQueue<ReadContinuation>
    /// The read timer running, and the one the queue asked for when it was armed.
    private var readTimer: (spec: TCPReadQueue<ReadContinuation>.Timer, scheduled: Scheduled<Void>)?
    /// The write side: queued and held writes, their progress and timeouts, the async window's waiting tasks.
    private var writes = TCPWriteQueue<WriteContinuation>()
    /// The write timer running, and the one the queue asked for when it was armed.
    private var writeTimer: (spec: TCPWriteQueue<WriteContinuation>.Timer, scheduled: Scheduled<Void>)?
    /// Async face: the timers of tasks waiting for room in the window, by write id.
    private var waitingTimers: [UInt64: Scheduled<Void>] = [:]
    private var closesAfterReads = false
    private var closesAfterWrites = false
    private var inReadLoop = false
    /// Handing admitted writes to the channel: their flush waits for the end of the batch.
    private var isDraining = false
    private var isProcessingReads = false
    /// Mirrors the channel's `autoRead` option (on from the start).
    private var isAutoReading = true
    private var flushPending = false
    private var nextID: UInt64 = 0
    /// The channel closed after a clean end of both directions; only buffered reads remain.
    private var channelGone = false
    /// Set when the connection was never established and is being abandoned; a channel that arrives later closes.
    var isClosed: Bool { state == .closed }
    /// The requested upgrade until the connection is secure: operations after its barrier wait for it.
    private var tls: TLSUpgrade?
    private var tlsHandler: NIOSSLHandler?
    /// The upgrade's context is being fetched (built on the thread pool when not cached).
    private var isPreparingTLS = false
    private var tlsTimer: Scheduled<Void>?
    private var trustRejected = false
    /// True once a TLS handshake completed (one upgrade per connection).
    private(set) var isSecure = false
    /// Async face: the write window shared with writing tasks (nil on the delegate face).
    var admission: WriteAdmission?
    /// `halfClose` sent the FIN: later writes fail without touching the connection.
    private var outputClosed = false
    /// Why the connection ended: the next operation's error (nil: closed on request).
    private var closedWith: AsyncSocketError?
    /// Async face `close()`: accepted writes go out first, within `closeLinger`.
    private var gracefulClose: (promise: EventLoopPromise<Void>, timer: Scheduled<Void>?)?
    /// How long `close()` waits for accepted writes to reach the kernel before closing anyway.
    var closeLinger: TimeAmount = .seconds(10)

    init(eventLoop: any EventLoop, owner: any SocketEngineOwner, policy: Policy) {
        self.eventLoop = eventLoop
        self.owner = owner
        self.policy = policy
        self.reads = TCPReadQueue(policy: policy)
        self.progress = NIOLockedValueBox(ProgressSnapshot())
    }

    // MARK: channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if state == .closed {
            context.close(promise: nil)
        } else if context.channel.isActive {
            activate(context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        activate(context: context)
        context.fireChannelActive()
    }

    private func activate(context: ChannelHandlerContext) {
        guard state == .waitingForChannel else { return }
        state = .active
        owner?.engineDidActivate(self)
        guard state == .active else { return }
        sendHeldWrites()
        startCurrentWrite()
        processReads()
        startHandshakeIfReady()
    }

    /// Hands the writes held back (before the channel was active, or behind a TLS marker) to the channel, up to
    /// the TLS marker if one is pending.
    private func sendHeldWrites() {
        for (id, bytes) in writes.takeHeld() { send(bytes, id: id) }
        acceptWaitingWrites()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state == .active else { return }
        reads.received(unwrapInboundIn(data))
        inReadLoop = true
        processReads()
        inReadLoop = false
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if flushPending {
            flushPending = false
            context.flush()
        }
        requestMoreDataIfNeeded()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            reads.endOfInput()
            processReads()
        } else if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            handshakeCompleted(negotiatedProtocol: negotiated)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if trustRejected {
            close(error: .tls(AsyncSocketError.peerCertificateRejected.message, underlying: error))
        } else {
            close(error: AsyncSocketError.wrapping(error, function: "read"))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if tlsHandler != nil, tls != nil, state == .active {
            close(
                error: .tls("The peer closed the connection during the TLS handshake", underlying: nil)
            )
            context.fireChannelInactive()
            return
        }
        if state == .active && !policy.failuresCloseConnection {
            // Async face, both directions ended cleanly (the peer closed after our half-close): reads go on serving
            // the buffered bytes, then the end of the stream; writes fail.
            reads.endOfInput()
            channelGone = true
            admission?.close(.closedByPeer)
            processReads()
            context.fireChannelInactive()
            return
        }
        if state != .closed {
            if reads.inputClosed {
                close(error: .closedByPeer)
            } else {
                reads.endOfInput()
                processReads()
                if state != .closed { close(error: .closedByPeer) }
            }
        }
        context.fireChannelInactive()
    }

    // MARK: operations (event loop only)

    func enqueueRead(_ kind: ReadKind, timeout: TimeAmount?, waiter: ReadWaiter<ReadContinuation>) -> UInt64 {
        eventLoop.assertInEventLoop()
        nextID &+= 1
        guard state != .closed, gracefulClose == nil else {
            let error = closedWith ?? AsyncSocketError.closedLocally
            switch waiter {
            case .task(let continuation): continuation.resume(throwing: error)
            case .frame(let operation): operation.fail(error)
            case .delegate: break
            }
            return nextID
        }
        if reads.enqueue(id: nextID, kind: kind, timeout: timeout, waiter: waiter) { processReads() }
        return nextID
    }

    func enqueueWrite(_ bytes: ByteBuffer, timeout: TimeAmount?, waiter: WriteWaiter<WriteContinuation>) -> UInt64 {
        eventLoop.assertInEventLoop()
        // Writes admitted without a visit to the loop were queued before this one.
        if case .task(.some) = waiter { drainAdmitted() }
        nextID &+= 1
        guard state != .closed, gracefulClose == nil, !channelGone, !outputClosed else {
            if case .task(let continuation?) = waiter {
                admission?.endSlowWrite()
                let error: AsyncSocketError =
                    channelGone && state != .closed ? .closedByPeer : (closedWith ?? .closedLocally)
                continuation.resume(throwing: error)
            }
            return nextID
        }
        let id = nextID
        if case .task(.some) = waiter {
            admission?.enqueued(bytes.readableBytes)
            if let timeout {
                waitingTimers[id] = eventLoop.assumeIsolated().scheduleTask(in: max(timeout, .zero)) { [self] in
                    abandonWrite(id: id, error: AsyncSocketError.writeTimeout)
                }
            }
        }
        let canSend = state == .active
        if let now = writes.enqueue(id: id, bytes: bytes, timeout: timeout, waiter: waiter, canSend: canSend) {
            send(now, id: id)
            if writes.headID == id { startCurrentWrite() }
        }
        acceptWaitingWrites()
        return id
    }

    /// Async face: hands the writes admitted under the window's lock to the queue, in order.
    func drainAdmitted() {
        guard let admission else { return }
        let inbox = admission.takeInbox()
        guard !inbox.isEmpty else { return }
        // One flush for the whole batch, now, instead of one scheduled for later.
        let wasDraining = isDraining
        isDraining = true
        for buffer in inbox {
            guard state != .closed, gracefulClose == nil, !channelGone, !outputClosed else {
                admission.written(buffer.readableBytes)
                continue
            }
            _ = enqueueWrite(buffer, timeout: nil, waiter: .task(nil))
        }
        isDraining = wasDraining
        if !wasDraining && !inReadLoop { flushIfNeeded() }
    }

    /// Async face: resumes the waiting writes that now have fewer than the window's bytes ahead of them and have
    /// been handed to the channel (a write held behind a TLS marker waits for the handshake).
    private func acceptWaitingWrites() {
        for accepted in writes.acceptWaiting(window: WriteAdmission.resumeBelow) {
            waitingTimers.removeValue(forKey: accepted.id)?.cancel()
            admission?.endSlowWrite()
            accepted.task.resume()
        }
    }

    /// Async face: the task waiting for write `id` stops waiting with `error` (timeout, cancellation); the bytes
    /// stay queued and go out in order.
    func abandonWrite(id: UInt64, error: any Error) {
        guard let task = writes.abandon(id: id) else { return }
        waitingTimers.removeValue(forKey: id)?.cancel()
        admission?.endSlowWrite()
        task.resume(throwing: error)
    }

    /// Async face: the task waiting for read `id` was cancelled. The read leaves the queue, consuming nothing.
    func cancelRead(id: UInt64, error: any Error) {
        guard let (waiter, wasHead) = reads.cancel(id: id) else { return }
        syncReadTimer()
        fail(waiter, with: error)
        if wasHead { processReads() }
    }

    /// The original's `disconnectAfterReading`: close once the read queue drains; pending writes are dropped.
    func closeAfterReading() {
        closesAfterReads = true
        dropWrites()
        if reads.headID == nil { close(error: nil) }
    }

    /// The original's `disconnectAfterWriting`: close once the write queue drains; pending reads are dropped.
    func closeAfterWriting() {
        closesAfterWrites = true
        _ = reads.removeAll()
        syncReadTimer()
        publishReadProgress()
        if writes.isEmpty { close(error: nil) }
    }

    /// Close once both queues drain.
    func closeAfterReadingAndWriting() {
        closesAfterReads = true
        closesAfterWrites = true
        if reads.headID == nil && writes.isEmpty { close(error: nil) }
    }

    /// Async face `close()`: pending reads end now; writes already handed to the channel go out first, then the
    /// connection closes. When they have not reached the kernel within `closeLinger` (a peer that stopped reading),
    /// it closes anyway and `promise` fails with `.writeTimeout`. A pending TLS upgrade closes at once.
    func closeGracefully(promise: EventLoopPromise<Void>) {
        drainAdmitted()
        guard state != .closed else {
            promise.succeed(())
            return
        }
        if let graceful = gracefulClose {
            graceful.promise.futureResult.cascade(to: promise)
            return
        }
        admission?.close(.closedLocally)
        guard state == .active, tls == nil, !writes.isEmpty, context != nil else {
            close(error: nil)
            promise.succeed(())
            return
        }
        for waiter in reads.removeAll() { fail(waiter, with: AsyncSocketError.closedLocally) }
        syncReadTimer()
        publishReadProgress()
        closesAfterWrites = true
        let linger = closeLinger
        let timer = eventLoop.assumeIsolated().scheduleTask(in: linger) { [self] in
            close(error: .writeTimeout)
        }
        gracefulClose = (promise, timer)
        flushIfNeeded()
    }

    /// The task awaiting a graceful close was cancelled: close now; its promise fails with `CancellationError`.
    func abortGracefulClose() {
        guard let graceful = gracefulClose else { return }
        gracefulClose = nil
        graceful.timer?.cancel()
        close(error: nil)
        graceful.promise.fail(CancellationError())
    }

    private func flushIfNeeded() {
        guard flushPending else { return }
        flushPending = false
        context?.flush()
    }

    /// Sends a FIN; reading goes on.
    func halfClose(promise: EventLoopPromise<Void>?) {
        drainAdmitted()
        guard let context, state == .active, gracefulClose == nil else {
            promise?.fail(AsyncSocketError.closedLocally)
            return
        }
        outputClosed = true
        admission?.close(.closedLocally)
        context.flush()
        context.close(mode: .output, promise: promise)
    }

    /// Ends the connection. Queued operations end with it: delegate-face tags and undelivered bytes ride on the
    /// error; awaiting tasks are resumed with the error (or `.closed` for a requested close).
    func close(error: AsyncSocketError?) {
        guard state != .closed else { return }
        state = .closed
        closedWith = error
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
        if tlsHandler != nil, let context {
            try? context.channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
        }
        // The handler may hold closures that capture this engine (manual trust): let go of it.
        tlsHandler = nil
        if let upgrade = tls {
            tls = nil
            reads.tlsBarrier = nil
            writes.tlsBarrier = nil
            upgrade.promise?.fail(error ?? AsyncSocketError.closedLocally)
        }
        var reported = error
        if reported != nil {
            reported?.pendingReadTags = reads.pendingTags
            reported?.pendingWriteTags = writes.pendingTags
            let unread = reads.takeBuffer()
            if unread.readableBytes > 0 {
                reported?.unreadData = Data(unread.readableBytesView)
            }
        }
        let taskError = error ?? AsyncSocketError.closedLocally
        for waiter in reads.removeAll() { fail(waiter, with: taskError) }
        for timer in waitingTimers.values { timer.cancel() }
        waitingTimers.removeAll()
        for task in writes.removeAll() {
            admission?.endSlowWrite()
            task.resume(throwing: taskError)
        }
        if let graceful = gracefulClose {
            gracefulClose = nil
            graceful.timer?.cancel()
            if let error { graceful.promise.fail(error) } else { graceful.promise.succeed(()) }
        }
        _ = reads.takeBuffer()
        progress.withLockedValue { $0 = ProgressSnapshot() }
        let owner = self.owner
        self.owner = nil
        owner?.engineDidClose(self, error: reported)
        if let context {
            context.flush()
            context.close(promise: nil)
        }
    }

    // MARK: TLS

    /// Queues the upgrade's marker in both queues: the handshake starts once every read and write queued before it
    /// completed; operations queued after it wait for the handshake. A second request while one is pending or
    /// after the connection is secure is ignored (its promise fails with `.badConfig`).
    func startTLS(_ upgrade: TLSUpgrade) {
        eventLoop.assertInEventLoop()
        guard state != .closed else {
            upgrade.promise?.fail(AsyncSocketError.closedLocally)
            return
        }
        guard tls == nil, !isSecure else {
            upgrade.promise?.fail(AsyncSocketError.badConfig("The connection is already secured or securing"))
            return
        }
        upgrade.barrier = nextID
        reads.tlsBarrier = nextID
        writes.tlsBarrier = nextID
        tls = upgrade
        if let timeout = upgrade.timeout {
            tlsTimer = eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
                tlsTimer = nil
                if tls === upgrade { close(error: upgrade.timeoutError) }
            }
        }
        if state == .active { startHandshakeIfReady() }
    }

    /// Starts the handshake when both queues reached the marker: the context is fetched (built off the loop when not
    /// cached), then the TLS handler joins the pipeline in front of the engine and the bytes buffered so far (the
    /// peer may already have sent its hello) are fed to it as ciphertext.
    private func startHandshakeIfReady() {
        guard state == .active, let upgrade = tls, tlsHandler == nil, !isPreparingTLS, context != nil else { return }
        if let read = reads.headID, read <= upgrade.barrier { return }
        if let write = writes.headID, write <= upgrade.barrier { return }
        isPreparingTLS = true
        upgrade.context(on: eventLoop).assumeIsolated().whenComplete { [self] result in
            isPreparingTLS = false
            guard state == .active, tls === upgrade else { return }
            switch result {
            case .success(let sslContext): installTLS(upgrade, sslContext: sslContext)
            case .failure(let error): close(error: .wrapping(error, function: "startTLS"))
            }
        }
    }

    private func installTLS(_ upgrade: TLSUpgrade, sslContext: NIOSSLContext) {
        guard let context else { return }
        let handler: NIOSSLHandler
        do {
            handler = try upgrade.makeHandler(context: sslContext) { [self] certificates, promise in
                askTrust(certificates, promise: promise)
            }
            tlsHandler = handler
            try context.pipeline.syncOperations.addHandler(handler, position: .before(self))
        } catch {
            close(error: .wrapping(error, function: "startTLS"))
            return
        }
        guard reads.buffer.readableBytes > 0, state == .active,
            let tlsContext = try? context.pipeline.syncOperations.context(handler: handler)
        else { return }
        let ciphertext = reads.takeBuffer()
        handler.channelRead(context: tlsContext, data: NIOAny(ciphertext))
        if state == .active { handler.channelReadComplete(context: tlsContext) }
    }

    private func handshakeCompleted(negotiatedProtocol: String?) {
        guard state == .active, let upgrade = tls else { return }
        if let failure = upgrade.pinningFailure(leaf: tlsHandler?.peerCertificate) {
            close(error: failure)
            return
        }
        tls = nil
        reads.tlsBarrier = nil
        writes.tlsBarrier = nil
        tlsTimer?.cancel()
        tlsTimer = nil
        isSecure = true
        owner?.engineDidSecure(self, negotiatedProtocol: negotiatedProtocol)
        upgrade.promise?.succeed(())
        guard state == .active else { return }
        sendHeldWrites()
        startCurrentWrite()
        processReads()
    }

    /// Manual trust: asks the owner; the first answer completes NIOSSL's promise on the event loop.
    private func askTrust(_ certificates: [NIOSSLCertificate], promise: EventLoopPromise<NIOSSLVerificationResult>) {
        let answered = NIOLockedValueBox(false)
        let loop = eventLoop
        let engine = NIOLoopBound(self, eventLoop: loop)
        let answer: @Sendable (Bool) -> Void = { accepted in
            let first = answered.withLockedValue { done -> Bool in
                defer { done = true }
                return !done
            }
            guard first else { return }
            loop.execute {
                if !accepted { engine.value.trustRejected = true }
                promise.succeed(accepted ? .certificateVerified : .failed)
            }
        }
        guard let owner, state == .active else {
            answer(false)
            return
        }
        owner.engine(
            self,
            didReceive: TLSPeerTrust(peerCertificates: certificates, peerName: tls?.peerName),
            answer: answer
        )
    }

    // MARK: reading

    /// Runs the read queue's actions until it stops. A delegate called inline (event-loop delivery) may queue reads
    /// from inside a completion: the loop below picks them up, so a nested call has nothing to do (and must not
    /// recurse once per buffered frame).
    private func processReads() {
        guard state == .active, !isProcessingReads else { return }
        isProcessingReads = true
        defer { isProcessingReads = false }
        while state == .active {
            let action = reads.next()
            syncReadTimer()
            switch action {
            case .deliver(let bytes, let waiter):
                // The progress snapshot moves on before the delegate can ask for it from its callback.
                publishReadProgress()
                deliver(bytes, to: waiter)
                guard state == .active else { return }
                if closesAfterReads && reads.headID == nil && (!closesAfterWrites || writes.isEmpty) {
                    close(error: nil)
                    return
                }
            case .endOfStream(let continuation):
                continuation.resume(returning: nil)
            case .fail(let waiter, let error):
                fail(waiter, with: error)
            case .partial(let tag, let length):
                owner?.engine(self, didReadPartialDataOfLength: length, tag: tag)
            case .readStreamClosed:
                owner?.engineReadStreamDidClose(self)
            case .askTimeout(let tag, let elapsed, let bytesDone):
                askReadTimeout(tag: tag, elapsed: elapsed, bytesDone: bytesDone)
                return
            case .close(let error):
                close(error: error)
                return
            case .awaitTLS:
                startHandshakeIfReady()
                if !inReadLoop { requestMoreDataIfNeeded() }
                publishReadProgress()
                return
            case .awaitBytes:
                publishReadProgress()
                if !inReadLoop { requestMoreDataIfNeeded() }
                return
            case .idle:
                publishReadProgress()
                if tls != nil {
                    startHandshakeIfReady()
                    guard state == .active else { return }
                }
                if !inReadLoop { requestMoreDataIfNeeded() }
                return
            }
        }
    }

    private func deliver(_ bytes: ByteBuffer, to waiter: ReadWaiter<ReadContinuation>) {
        switch waiter {
        case .delegate(let tag, let destination):
            owner?.engine(self, didRead: bytes, tag: tag, destination: destination)
        case .task(let continuation):
            continuation.resume(returning: bytes)
        case .frame(let operation):
            operation.fail(AsyncSocketError(code: .other, message: "A frame read was served as bytes"))
        }
    }

    /// Ends a task's or frame's read with `error`; a delegate read has nobody to tell (its tag rides on the close).
    private func fail(_ waiter: ReadWaiter<ReadContinuation>, with error: any Error) {
        switch waiter {
        case .task(let continuation): continuation.resume(throwing: error)
        case .frame(let operation): operation.fail(error)
        case .delegate: break
        }
    }

    /// Reads from the kernel while a queued read waits for bytes or while less than `pauseThreshold` bytes are
    /// buffered; past that, with no read wanting them, the kernel holds the data (back-pressure), so a peer's close
    /// is noticed once queued reads drain the buffer. The channel reads on its own (`autoRead`) while reading is
    /// wanted, which keeps its read interest registered instead of re-arming it for every chunk.
    private func requestMoreDataIfNeeded() {
        guard state == .active, !reads.inputClosed, let context else { return }
        let wantsBytes =
            (reads.headID != nil && !reads.pausedForTimeoutQuery) || reads.buffer.readableBytes < Self.pauseThreshold
        guard wantsBytes != isAutoReading else { return }
        isAutoReading = wantsBytes
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: wantsBytes)
    }

    /// Makes the running read timer the one the queue wants: cancels a stale one, arms a new one.
    private func syncReadTimer() {
        let wanted = reads.timer
        guard readTimer?.spec != wanted else { return }
        readTimer?.scheduled.cancel()
        readTimer = nil
        guard let wanted else { return }
        let scheduled = eventLoop.assumeIsolated().scheduleTask(in: wanted.duration) { [self] in
            readTimer = nil
            guard state == .active else { return }
            let action = reads.timerFired(id: wanted.id, duration: wanted.duration)
            switch action {
            case .fail(let waiter, let error):
                fail(waiter, with: error)
                processReads()
            case .askTimeout(let tag, let elapsed, let bytesDone):
                askReadTimeout(tag: tag, elapsed: elapsed, bytesDone: bytesDone)
            default:
                break
            }
        }
        readTimer = (wanted, scheduled)
    }

    /// Asks the delegate whether the head read may have more time; reads pause until it answers.
    private func askReadTimeout(tag: Int, elapsed: TimeAmount, bytesDone: Int) {
        guard let id = reads.headID else { return }
        owner?.engine(self, shouldTimeout: .read, tag: tag, elapsed: elapsed, bytesDone: bytesDone) {
            [self] extensionTime in
            guard state == .active else { return }
            switch reads.timeoutAnswered(id: id, extension: extensionTime) {
            case .close(let error): close(error: error)
            case .awaitBytes:
                syncReadTimer()
                processReads()
            default: processReads()
            }
        }
    }

    private func publishReadProgress() {
        guard policy.reportsProgress else { return }
        let snapshot = reads.progress
        progress.withLockedValue { $0.read = snapshot }
    }

    // MARK: writing

    private func send(_ bytes: ByteBuffer, id: UInt64) {
        guard let context else { return }
        var remaining = bytes
        let sliceSize = policy.reportsProgress ? Self.progressSliceSize : Int.max
        repeat {
            let length = min(remaining.readableBytes, sliceSize)
            let slice = remaining.readSlice(length: length)!
            let promise = eventLoop.makePromise(of: Void.self)
            promise.futureResult.assumeIsolated().whenComplete { [self] result in
                sliceWritten(id: id, length: length, result: result)
            }
            context.write(wrapOutboundOut(slice), promise: promise)
        } while remaining.readableBytes > 0
        if inReadLoop || isDraining {
            flushPending = true
        } else if !flushPending {
            flushPending = true
            eventLoop.assumeIsolated().execute { [self] in
                guard flushPending else { return }
                flushPending = false
                self.context?.flush()
            }
        }
    }

    private func sliceWritten(id: UInt64, length: Int, result: Result<Void, any Error>) {
        guard state == .active else { return }
        guard case .success = result else {
            if case .failure(let error) = result { close(error: .wrapping(error, function: "write")) }
            return
        }
        let completed: WriteWaiter<WriteContinuation>
        switch writes.written(id: id, length: length) {
        case .ignored:
            return
        case .partial(let tag, let length):
            admission?.written(length)
            if let tag { owner?.engine(self, didWritePartialDataOfLength: length, tag: tag) }
            publishWriteProgress()
            acceptWaitingWrites()
            return
        case .completed(let waiter):
            admission?.written(length)
            completed = waiter
        }
        syncWriteTimer()
        publishWriteProgress()
        switch completed {
        case .delegate(let tag): owner?.engine(self, didWriteDataWithTag: tag)
        case .task(let continuation): continuation?.resume()
        }
        guard state == .active else { return }
        if closesAfterWrites && writes.isEmpty && (!closesAfterReads || reads.headID == nil) {
            close(error: nil)
            return
        }
        acceptWaitingWrites()
        startHandshakeIfReady()
        startCurrentWrite()
    }

    /// Arms the current write's timer: the delegate face's (async-face writes time out while they wait for room).
    private func startCurrentWrite() {
        publishWriteProgress()
        guard state == .active else { return }
        writes.armTimerIfNeeded()
        syncWriteTimer()
    }

    /// Makes the running write timer the one the queue wants: cancels a stale one, arms a new one.
    private func syncWriteTimer() {
        let wanted = writes.timer
        guard writeTimer?.spec != wanted else { return }
        writeTimer?.scheduled.cancel()
        writeTimer = nil
        guard let wanted else { return }
        let scheduled = eventLoop.assumeIsolated().scheduleTask(in: wanted.duration) { [self] in
            writeTimer = nil
            writeTimerFired(id: wanted.id, duration: wanted.duration)
        }
        writeTimer = (wanted, scheduled)
    }

    private func writeTimerFired(id: UInt64, duration: TimeAmount) {
        guard state == .active, let ask = writes.timerFired(id: id, duration: duration) else { return }
        owner?.engine(self, shouldTimeout: .write, tag: ask.tag, elapsed: ask.elapsed, bytesDone: ask.bytesDone) {
            [self] extensionTime in
            guard state == .active else { return }
            switch writes.timeoutAnswered(id: id, extension: extensionTime) {
            case nil: return
            case true?: syncWriteTimer()
            case false?: close(error: .writeTimeout)
            }
        }
    }

    private func dropWrites() {
        for task in writes.removeAll() { task.resume(throwing: AsyncSocketError.closedLocally) }
        syncWriteTimer()
        publishWriteProgress()
    }

    private func publishWriteProgress() {
        guard policy.reportsProgress else { return }
        let snapshot = writes.progress
        progress.withLockedValue { $0.write = snapshot }
    }
}

@available(*, unavailable)
extension SocketEngine: Sendable {}
