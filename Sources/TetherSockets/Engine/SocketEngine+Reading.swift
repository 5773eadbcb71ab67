import NIOConcurrencyHelpers
import NIOCore
import TetherConcurrency

extension SocketEngine {
    // MARK: reading

    /// Runs the read queue's actions until it stops. A delegate called inline (event-loop delivery) may queue reads
    /// from inside a completion: the loop below picks them up, so a nested call has nothing to do (and must not
    /// recurse once per buffered frame).
    func processReads() {
        guard !isProcessingReads, peek({ $0.isActive }) else { return }
        isProcessingReads = true
        defer { isProcessingReads = false }
        let reportsProgress = policy.reportsProgress
        while true {
            // One access to the machine per step (it is behind a lock on the delegate face): the next action, the
            // read timer the queue wants after it, and the progress snapshot to publish. (Captured variables, not a
            // returned tuple: a tuple holding the generic queue's action is copied through runtime witnesses.)
            var active = true
            var timer: ReadQueue.Timer?
            var snapshot: GCDAsyncSocket.IOProgress??
            let action: ReadQueue.Action = peek { m in
                guard m.isActive else {
                    active = false
                    return .idle
                }
                let action = m.reads.next()
                timer = m.reads.timer
                // Only the actions below that publish a snapshot pay for one (it re-runs the head read's matcher).
                switch action {
                case .deliver, .partial, .awaitBytes:
                    if reportsProgress { snapshot = .some(m.reads.progress) }
                default:
                    break
                }
                return action
            }
            guard active else { return }
            syncReadTimer(to: timer)
            switch action {
            case .deliver(let bytes, let waiter):
                // The progress snapshot moves on before the delegate can ask for it from its callback.
                publish(readProgress: snapshot)
                deliver(bytes, to: waiter)
                let (active, drained) = peek { m in
                    m.reads.delivered()
                    return (m.isActive, m.isDrainedForClose)
                }
                guard active else { return }
                if drained {
                    close(error: nil)
                    return
                }
            case .endOfStream(let continuation):
                continuation.resume(returning: nil)
            case .fail(let waiter, let error):
                fail(waiter, with: error)
            case .partial(let tag, let length):
                // The snapshot moves on first: a delegate that reads the progress from this callback sees it.
                publish(readProgress: snapshot)
                owner?.engine(self, didReadPartialDataOfLength: length, tag: tag)
            case .readStreamClosed:
                owner?.engineReadStreamDidClose(self)
            case .askTimeout(let tag, let elapsed, let bytesDone):
                askReadTimeout(tag: tag, elapsed: elapsed, bytesDone: bytesDone)
                return
            case .close(let error):
                // The peer's close with bytes unread (RunLoop face): a read handed over from another thread before
                // the bytes came has not reached the queue yet. The inbox runs this again once it has.
                if policy.closesAtEndOfStreamWithUnreadBytes, owner?.hasPendingOperations == true,
                    peek({ !$0.reads.hasRequests && $0.reads.inputClosed && $0.reads.bufferedBytes > 0 })
                {
                    return
                }
                close(error: error)
                return
            case .awaitTLS:
                startHandshakeIfReady()
                if !inReadLoop { requestMoreDataIfNeeded() }
                publishReadProgress()
                return
            case .awaitBytes:
                publish(readProgress: snapshot)
                if !inReadLoop { requestMoreDataIfNeeded() }
                return
            case .idle:
                publishReadProgress()
                if upgrade != nil {
                    startHandshakeIfReady()
                    guard peek({ $0.isActive }) else { return }
                }
                if !inReadLoop { requestMoreDataIfNeeded() }
                return
            }
        }
    }

    func deliver(_ bytes: ByteBuffer, to waiter: ReadWaiter<ReadContinuation>) {
        switch waiter {
        case .delegate(let tag, let destination):
            owner?.engine(self, didRead: bytes, tag: tag, destination: destination)
        case .task(let continuation):
            continuation.resume(returning: bytes)
        case .frame(let operation):
            operation.fail(GCDAsyncSocketError(code: .other, message: "A frame read was served as bytes"))
        }
    }

    /// Ends a task's or frame's read with `error`; a delegate read has nobody to tell (its tag rides on the close).
    func fail(_ waiter: ReadWaiter<ReadContinuation>, with error: any Error) {
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
    func requestMoreDataIfNeeded() {
        guard let context else { return }
        // One access to the machine (behind a lock on the delegate face): the pause is decided and published
        // together, so a read served from the buffer on the delegate queue either came first (and the decision saw
        // what it took) or sees the pause and wakes the loop when it takes the buffer below the threshold.
        let autoReading = isAutoReading
        let wantsBytes: Bool? = peek { m in
            guard m.isActive, !m.reads.inputClosed else { return nil }
            let wants =
                (m.reads.hasRequests && !m.reads.pausedForTimeoutQuery) || m.reads.bufferedBytes < Self.pauseThreshold
                || m.reads.discardsInput
            guard wants != autoReading else { return nil }
            m.isReadingPaused = !wants
            return wants
        }
        guard let wantsBytes else { return }
        isAutoReading = wantsBytes
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: wantsBytes)
    }

    /// Makes the running read timer the one the queue wants: cancels a stale one, arms a new one.
    func syncReadTimer() {
        syncReadTimer(to: peek({ $0.reads.timer }))
    }

    /// Makes the running read timer `wanted` (the queue's, read in the caller's access to the machine).
    func syncReadTimer(to wanted: ReadQueue.Timer?) {
        guard readTimer?.spec != wanted else { return }
        readTimer?.scheduled.cancel()
        readTimer = nil
        guard let wanted else { return }
        let scheduled = eventLoop.assumeIsolated().scheduleTask(in: wanted.duration) { [self] in
            readTimer = nil
            guard peek({ $0.isActive }) else { return }
            let action = machine.reads.timerFired(id: wanted.id, duration: wanted.duration)
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
    func askReadTimeout(tag: Int, elapsed: TimeAmount, bytesDone: Int) {
        guard let id = peek({ $0.reads.headID }) else { return }
        owner?.engine(self, shouldTimeout: .read, tag: tag, elapsed: elapsed, bytesDone: bytesDone) {
            [self] extensionTime in
            guard peek({ $0.isActive }) else { return }
            switch machine.reads.timeoutAnswered(id: id, extension: extensionTime) {
            case .close(let error): close(error: error)
            case .awaitBytes:
                syncReadTimer()
                processReads()
            default: processReads()
            }
        }
    }

    func publishReadProgress() {
        guard policy.reportsProgress else { return }
        publish(readProgress: peek({ $0.reads.progress }))
    }

    /// Publishes a read progress snapshot taken in the caller's access to the machine (nil: progress not reported).
    func publish(readProgress snapshot: GCDAsyncSocket.IOProgress??) {
        guard case .some(let snapshot) = snapshot else { return }
        progress.withLock { $0.read = snapshot }
    }
}
