import NIOConcurrencyHelpers
import NIOCore
import TetherConcurrency

extension SocketEngine {
    // MARK: writing

    /// Hands the writes held back (before the channel was active, or behind a TLS marker) to the channel, up to
    /// the TLS marker if one is pending.
    func sendHeldWrites() {
        for (id, bytes) in machine.writes.takeHeld() { send(bytes, id: id) }
        acceptWaitingWrites()
    }

    /// Async face: resumes the waiting writes that now have fewer than the window's bytes ahead of them and have
    /// been handed to the channel (a write held behind a TLS marker waits for the handshake).
    func acceptWaitingWrites() {
        while let accepted = machine.writes.nextAccepted(window: WriteAdmission.resumeBelow) {
            waitingTimers.removeValue(forKey: accepted.id)?.cancel()
            admission?.endSlowWrite()
            accepted.task.resume()
        }
    }

    func send(_ bytes: ByteBuffer, id: UInt64) {
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

    func sliceWritten(id: UInt64, length: Int, result: Result<Void, any Error>) {
        guard case .success = result else {
            if peek({ $0.isActive }), case .failure(let error) = result {
                close(error: .wrapping(error, function: "write"))
            }
            return
        }
        livenessWrote()
        let reportsProgress = policy.reportsProgress
        // One access to the machine (behind a lock on the delegate face): the queue's answer, the write timer it
        // wants after it, and the progress snapshot to publish (captured variables: see `processReads`).
        var timer: WriteQueue.Timer?
        var snapshot: GCDAsyncSocket.IOProgress??
        let written: WriteQueue.Progress = peek { m in
            guard m.isActive else { return .ignored }
            let written = m.writes.written(id: id, length: length)
            timer = m.writes.timer
            if reportsProgress { snapshot = .some(m.writes.progress) }
            return written
        }
        let completed: WriteWaiter<WriteContinuation>
        switch written {
        case .ignored:
            return
        case .partial(let tag, let length):
            admission?.written(length)
            // The snapshot moves on first: a delegate that reads the progress from this callback sees it.
            publish(writeProgress: snapshot)
            if let tag { owner?.engine(self, didWritePartialDataOfLength: length, tag: tag) }
            acceptWaitingWrites()
            return
        case .completed(let waiter):
            admission?.written(length)
            completed = waiter
        }
        syncWriteTimer(to: timer)
        publish(writeProgress: snapshot)
        switch completed {
        case .delegate(let tag): owner?.engine(self, didWriteDataWithTag: tag)
        case .task(let continuation): continuation?.resume()
        }
        let (active, drained) = peek { ($0.isActive, $0.isDrainedForClose) }
        guard active else { return }
        if drained {
            close(error: nil)
            return
        }
        acceptWaitingWrites()
        startHandshakeIfReady()
        startCurrentWrite()
    }

    /// Arms the current write's timer: the delegate face's (async-face writes time out while they wait for room).
    func startCurrentWrite() {
        let reportsProgress = policy.reportsProgress
        // One access to the machine: the progress to publish, then (while active) the timer the current write wants.
        var snapshot: GCDAsyncSocket.IOProgress??
        var timer: WriteQueue.Timer?
        let active: Bool = peek { m in
            if reportsProgress { snapshot = .some(m.writes.progress) }
            guard m.isActive else { return false }
            m.writes.armTimerIfNeeded()
            timer = m.writes.timer
            return true
        }
        publish(writeProgress: snapshot)
        guard active else { return }
        syncWriteTimer(to: timer)
    }

    /// Makes the running write timer the one the queue wants: cancels a stale one, arms a new one.
    func syncWriteTimer() {
        syncWriteTimer(to: peek({ $0.writes.timer }))
    }

    /// Makes the running write timer `wanted` (the queue's, read in the caller's access to the machine).
    func syncWriteTimer(to wanted: WriteQueue.Timer?) {
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

    func writeTimerFired(id: UInt64, duration: TimeAmount) {
        guard peek({ $0.isActive }), let ask = machine.writes.timerFired(id: id, duration: duration) else { return }
        owner?.engine(self, shouldTimeout: .write, tag: ask.tag, elapsed: ask.elapsed, bytesDone: ask.bytesDone) {
            [self] extensionTime in
            guard peek({ $0.isActive }) else { return }
            switch machine.writes.timeoutAnswered(id: id, extension: extensionTime) {
            case nil: return
            case true?: syncWriteTimer()
            case false?: close(error: .writeTimeout)
            }
        }
    }

    func dropWrites() {
        for task in machine.writes.removeAll() { task.resume(throwing: GCDAsyncSocketError.closedLocally) }
        syncWriteTimer()
        publishWriteProgress()
    }

    func publishWriteProgress() {
        guard policy.reportsProgress else { return }
        publish(writeProgress: peek({ $0.writes.progress }))
    }

    /// Publishes a write progress snapshot taken in the caller's access to the machine (nil: not reported).
    func publish(writeProgress snapshot: GCDAsyncSocket.IOProgress??) {
        guard case .some(let snapshot) = snapshot else { return }
        progress.withLock { $0.write = snapshot }
    }
}
