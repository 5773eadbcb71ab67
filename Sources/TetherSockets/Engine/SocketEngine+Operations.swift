import NIOCore

extension SocketEngine {
    // MARK: operations (event loop only)

    /// Queues a read; returns its id (for cancellation). Refused when the phase refuses reads: a task or frame
    /// waiter fails at once, a delegate read is dropped (as the original does after a close).
    func enqueueRead(_ kind: ReadKind, timeout: TimeAmount?, waiter: ReadWaiter<ReadContinuation>) -> UInt64 {
        eventLoop.assertInEventLoop()
        // One access to the machine (behind a lock on the delegate face).
        let (id, refusal, isHead): (UInt64, GCDAsyncSocketError?, Bool) = peek { m in
            let id = m.nextID()
            if let refusal = m.readRefusal { return (id, refusal, false) }
            return (id, nil, m.reads.enqueue(id: id, kind: kind, timeout: timeout, waiter: waiter))
        }
        if let refusal {
            fail(waiter, with: refusal)
            return id
        }
        if isHead { processReads() }
        return id
    }

    /// Queues a write; returns its id. It goes to the channel at once when the connection is active and no TLS
    /// marker holds it back. Refused when the phase refuses writes (a waiting task fails at once).
    func enqueueWrite(_ bytes: ByteBuffer, timeout: TimeAmount?, waiter: WriteWaiter<WriteContinuation>) -> UInt64 {
        eventLoop.assertInEventLoop()
        // Writes admitted without a visit to the loop were queued before this one.
        if case .task(.some) = waiter { drainAdmitted() }
        let id = machine.nextID()
        if let refusal = peek({ $0.writeRefusal }) {
            if case .task(let continuation?) = waiter {
                admission?.endSlowWrite()
                continuation.resume(throwing: refusal)
            }
            return id
        }
        if case .task(.some) = waiter {
            admission?.enqueued(bytes.readableBytes)
            if let timeout {
                waitingTimers[id] = eventLoop.assumeIsolated().scheduleTask(in: max(timeout, .zero)) { [self] in
                    abandonWrite(id: id, error: GCDAsyncSocketError.writeTimeout)
                }
            }
        }
        let canSend = peek({ $0.isActive })
        if let now = machine.writes.enqueue(id: id, bytes: bytes, timeout: timeout, waiter: waiter, canSend: canSend) {
            send(now, id: id)
            if peek({ $0.writes.headID }) == id { startCurrentWrite() }
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
            guard peek({ $0.writeRefusal }) == nil else {
                admission.written(buffer.readableBytes)
                continue
            }
            _ = enqueueWrite(buffer, timeout: nil, waiter: .task(nil))
        }
        isDraining = wasDraining
        if !wasDraining && !inReadLoop { flushIfNeeded() }
    }

    /// Async face: the task waiting for write `id` stops waiting with `error` (timeout, cancellation); the bytes
    /// stay queued and go out in order.
    func abandonWrite(id: UInt64, error: any Error) {
        guard let task = machine.writes.abandon(id: id) else { return }
        waitingTimers.removeValue(forKey: id)?.cancel()
        admission?.endSlowWrite()
        task.resume(throwing: error)
    }

    /// Async face: the task waiting for read `id` was cancelled. The read leaves the queue, consuming nothing.
    func cancelRead(id: UInt64, error: any Error) {
        guard let (waiter, wasHead) = machine.reads.cancel(id: id) else { return }
        syncReadTimer()
        fail(waiter, with: error)
        if wasHead { processReads() }
    }

    /// The original's `disconnectAfterReading`: close once the read queue drains; pending writes are dropped.
    func closeAfterReading() {
        dropWrites()
        if machine.closeAfter(.reads) { close(error: nil) }
    }

    /// The original's `disconnectAfterWriting`: close once the write queue drains; pending reads are dropped, and
    /// what arrives meanwhile is read and dropped (no read can come any more).
    func closeAfterWriting() {
        _ = machine.reads.removeAll()
        syncReadTimer()
        publishReadProgress()
        if machine.closeAfterWriting() {
            close(error: nil)
        } else {
            requestMoreDataIfNeeded()
        }
    }

    /// Close once both queues drain.
    func closeAfterReadingAndWriting() {
        if machine.closeAfter([.reads, .writes]) { close(error: nil) }
    }

    /// Async face `close()`: pending reads end now; writes already handed to the channel go out first, then the
    /// connection closes. When they have not reached the kernel within `closeLinger` (a peer that stopped reading),
    /// it closes anyway and `promise` fails with `.writeTimeout`. A pending TLS upgrade closes at once.
    func closeGracefully(promise: EventLoopPromise<Void>) {
        drainAdmitted()
        if peek({ $0.isClosed }) {
            machine.closedByCaller()
            promise.succeed(())
            return
        }
        if let graceful = gracefulClose {
            graceful.promise.futureResult.cascade(to: promise)
            return
        }
        admission?.close(.closedLocally)
        guard context != nil, machine.closeGracefully() else {
            close(error: nil)
            promise.succeed(())
            return
        }
        for waiter in machine.reads.removeAll() { fail(waiter, with: GCDAsyncSocketError.closedLocally) }
        syncReadTimer()
        publishReadProgress()
        let timer = eventLoop.assumeIsolated().scheduleTask(in: closeLinger) { [self] in
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

    /// Sends a FIN; reading goes on.
    func halfClose(promise: EventLoopPromise<Void>?) {
        drainAdmitted()
        guard let context, machine.halfClose() else {
            promise?.fail(GCDAsyncSocketError.closedLocally)
            return
        }
        admission?.close(.closedLocally)
        context.flush()
        context.close(mode: .output, promise: promise)
    }
}
