import NIOCore

/// The engine's side of liveness: it feeds the ``LivenessMachine`` the connection's events (established, bytes read,
/// a write completed, the application's confirmation, closed) and executes what it answers (timers, idle reports to
/// the face, the ping, the close), and it sets the keepalive options on the channel. Nothing runs for a connection
/// that asked for none of it (`liveness` is nil).
extension SocketEngine {
    /// Before the engine reaches its loop (a face's start): the settings the connection starts with.
    func prepareLiveness(_ settings: LivenessSettings) {
        guard !settings.isDefault else { return }
        let driver = LivenessDriver(settings: settings)
        _ = driver.machine.configure(settings.machineConfiguration, now: .now())
        liveness = driver
    }

    /// On the loop: new settings, in force at once on an established connection (the idle and heartbeat timers
    /// start over from now), else from its start.
    /// - Throws: the system's refusal of a keepalive option (the other settings are in force).
    func configureLiveness(_ settings: LivenessSettings) throws {
        eventLoop.assertInEventLoop()
        let driver: LivenessDriver
        if let existing = liveness {
            driver = existing
        } else {
            guard !settings.isDefault else { return }
            driver = LivenessDriver(settings: .init())
            liveness = driver
        }
        driver.settings = settings
        if driver.machine.configuration != settings.machineConfiguration {
            executeLiveness(driver.machine.configure(settings.machineConfiguration, now: .now()))
        }
        guard peek({ $0.isActive }) else { return }
        // A connection that asked for nothing when it came up starts its timers now.
        if !driver.machine.isRunning { executeLiveness(driver.machine.start(now: .now())) }
        try applyKeepalive(driver)
    }

    /// The engine joined the channel's pipeline: keepalive goes on the socket now, so that a socket handed to a
    /// delegate before its channel is active (an accepted one is) already carries it.
    func livenessJoinedPipeline() {
        guard let driver = liveness else { return }
        try? applyKeepalive(driver)
    }

    /// The connection is established: keepalive goes on the channel and the timers start.
    func startLiveness() {
        guard let driver = liveness else { return }
        try? applyKeepalive(driver)
        executeLiveness(driver.machine.start(now: .now()))
    }

    /// A read batch brought bytes.
    func livenessRead() {
        guard let driver = liveness, driver.machine.isRunning else { return }
        executeLiveness(driver.machine.read(now: .now()))
    }

    /// A write completed.
    func livenessWrote() {
        guard let driver = liveness, driver.machine.isRunning else { return }
        executeLiveness(driver.machine.wrote(now: .now()))
    }

    /// The application recognised the reply to the ping.
    func livenessReplyConfirmed() {
        guard let driver = liveness else { return }
        executeLiveness(driver.machine.replyConfirmed())
    }

    /// The connection ended: the timers stop.
    func stopLiveness() {
        guard let driver = liveness else { return }
        executeLiveness(driver.machine.stop())
    }

    private func applyKeepalive(_ driver: LivenessDriver) throws {
        let wanted = driver.settings.keepalive
        // A connection that never asked for keepalive keeps the system's socket untouched.
        guard driver.appliedKeepalive != wanted, driver.appliedKeepalive != nil || wanted != .off,
            let channel = context?.channel
        else { return }
        driver.appliedKeepalive = wanted
        try wanted.apply(to: channel)
    }

    private func executeLiveness(_ actions: [LivenessMachine.Action]) {
        guard let driver = liveness else { return }
        for action in actions {
            switch action {
            case .arm(let timer, let id, let deadline):
                driver.timers[timer]?.cancel()
                // A report or a close executed before this action may have stopped the machine.
                guard driver.machine.isRunning else {
                    driver.timers[timer] = nil
                    continue
                }
                driver.timers[timer] = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
                    guard let driver = liveness else { return }
                    driver.timers[timer] = nil
                    executeLiveness(driver.machine.timerFired(timer, id: id, now: .now()))
                }
            case .cancel(let timer):
                driver.timers.removeValue(forKey: timer)?.cancel()
            case .report(let event):
                owner?.engine(self, didBecomeIdle: event)
            case .sendPing:
                sendPing(driver.settings.heartbeat?.ping ?? [])
            case .closeForMissingReply:
                close(error: .heartbeatTimeout)
            }
        }
    }

    /// Queues the ping behind the writes already queued: the async face's through its write window (skipped when
    /// the window is full: those writes are the probe then), the delegate face's as an untagged write that reports
    /// to nobody.
    private func sendPing(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, let context, peek({ $0.writeRefusal }) == nil else { return }
        let buffer = context.channel.allocator.buffer(bytes: bytes)
        if let admission {
            guard admission.admit(buffer).admitted else { return }
            drainAdmitted()
        } else {
            _ = enqueueWrite(buffer, timeout: nil, waiter: .task(nil))
        }
    }
}
