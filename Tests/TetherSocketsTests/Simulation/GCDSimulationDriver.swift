import Foundation
import NIOCore
import NIOPosix
import TetherConcurrency
import TetherSockets

/// Runs one ``SocketSchedule`` on a `GCDAsyncSocket` as its delegate: issues the schedule's reads and writes (from
/// callbacks, from another thread, with random windows of outstanding reads), feeds every callback to the
/// ``ReadModel``, and checks the callbacks' threads, their order, and that none follows the disconnect.
final class GCDSimulationDriver: GCDAsyncSocketDelegate, @unchecked Sendable {
    // Sendable: the mutable state is behind `model`'s and `checks`' locks; `issuing` orders the calls into the
    // socket (recursive: an event-loop delegate can be called back inside its own call).
    struct Checks {
        var inCallback: Thread?
        var disconnects = 0
        var lateCallbacks: [String] = []
        var stepIndex = 0
        var window = 1
        var endingStarted = false
        var stallTag: Int?
        var stallIssued: ContinuousClock.Instant?
        var closedAt: ContinuousClock.Instant?
        var closeError: GCDAsyncSocketError??
        var timeoutAnswers = 0
        /// The tag of the first read issued after `startTLS` (TLS schedules), once issued.
        var firstSecureRead: Int?
        var secured = 0
        /// Steps being issued (their reads recorded in the model, the socket's calls not returned yet), and the last
        /// read whose call returned: for a schedule that hung.
        var issuesInProgress = 0
        var lastIssuedRead: Int?
    }

    let schedule: SocketSchedule
    let delivery: GCDAsyncSocket.CallbackDelivery
    let queue = DispatchQueue(label: "simulation.delegate")
    private let other = DispatchQueue(label: "simulation.other")
    private let queueKey = DispatchSpecificKey<Bool>()
    let model: LockedBox<ReadModel>
    let checks = LockedBox(Checks())
    private let issuing = NSRecursiveLock()
    /// The socket's loop, from the first callback (event-loop delivery checks every callback's thread against it).
    private let firstLoop = LockedBox<(any EventLoop)?>(nil)
    var loop: (any EventLoop)? {
        get { firstLoop.withLock { $0 } }
        set { firstLoop.withLock { $0 = newValue } }
    }
    /// Set when the life ended (the disconnect callback), or when the ending needs the test's task.
    let ended = Latch<Void>()
    let needsTask = Latch<Void>()
    /// The test's strong reference, dropped by the `release` ending.
    let holder: LockedBox<GCDAsyncSocket?>
    /// The client settings `startTLS` is called with (TLS schedules).
    let tlsSettings: TLSSettings?

    init(
        schedule: SocketSchedule,
        delivery: GCDAsyncSocket.CallbackDelivery,
        socket: GCDAsyncSocket,
        tlsSettings: TLSSettings? = nil
    ) {
        self.schedule = schedule
        self.delivery = delivery
        self.tlsSettings = tlsSettings
        var limit: Int?
        if case .peerCloses(let length) = schedule.ending { limit = length }
        model = LockedBox(ReadModel(stream: schedule.stream, limit: limit))
        holder = LockedBox(socket)
        queue.setSpecific(key: queueKey, value: true)
    }

    /// Where the driver stands, for a schedule that hung.
    var diagnosis: String {
        let c = checks.withLock { $0 }
        return "driver: step \(c.stepIndex) of \(schedule.steps.count), window \(c.window), ending started "
            + "\(c.endingStarted), steps being issued \(c.issuesInProgress), last read issued \(c.lastIssuedRead ?? -1)"
    }

    var violations: [String] {
        model.withLock { $0.violations } + checks.withLock { $0.lateCallbacks }
    }

    // MARK: issuing

    private func run(_ issuer: SocketSchedule.Issuer, _ body: () -> Void) {
        switch issuer {
        case .current: body()
        case .otherThread: other.sync(execute: body)
        }
    }

    /// Issues steps while fewer reads than the window are outstanding; starts the ending after the last step.
    func fill(_ sock: GCDAsyncSocket) {
        issuing.lock()
        defer { issuing.unlock() }
        while true {
            let next: (SocketSchedule.Step, Int, (Int, Data)?, Bool)? = checks.withLock { c in
                guard !c.endingStarted, c.stepIndex < schedule.steps.count else { return nil }
                let pending = model.withLock { $0.pendingReads }
                guard pending < c.window else { return nil }
                let step = schedule.steps[c.stepIndex]
                let secure = schedule.tls?.step == c.stepIndex
                c.stepIndex += 1
                c.window = step.window
                return model.withLock { m in
                    if secure { c.firstSecureRead = m.reads.count }
                    return (step, m.issue(step.read), step.write.map { m.issueWrite(size: $0) }, secure)
                }
            }
            guard let (step, tag, write, secure) = next else { break }
            checks.withLock { $0.issuesInProgress += 1 }
            run(step.issuer) {
                if secure { sock.startTLS(tlsSettings) }
                if let (writeTag, bytes) = write { sock.write(bytes, withTimeout: step.timeout, tag: writeTag) }
                issueRead(sock, step.read, tag: tag, timeout: step.timeout)
            }
            checks.withLock {
                $0.issuesInProgress -= 1
                $0.lastIssuedRead = tag
            }
        }
        let done = checks.withLock { c -> Bool in
            guard !c.endingStarted, c.stepIndex == schedule.steps.count else { return false }
            guard model.withLock({ $0.pendingReads == 0 }) else { return false }
            c.endingStarted = true
            return true
        }
        guard done else { return }
        // A switch after the last step: `startTLS` before the ending.
        if schedule.tls?.step == schedule.steps.count {
            checks.withLock { c in c.firstSecureRead = model.withLock { $0.reads.count } }
            sock.startTLS(tlsSettings)
        }
        startEnding(sock)
    }

    private func issueRead(_ sock: GCDAsyncSocket, _ read: SocketSchedule.Read, tag: Int, timeout: TimeInterval) {
        switch read {
        case .available(let max, let buffered):
            if buffered {
                let buffer = NSMutableData(length: tag % 5)!
                buffers.withLock { $0[tag] = (buffer, tag % 5) }
                sock.readData(
                    withTimeout: timeout,
                    buffer: buffer,
                    bufferOffset: UInt(tag % 5),
                    maxLength: UInt(max),
                    tag: tag
                )
            } else {
                sock.readData(withTimeout: timeout, tag: tag)
            }
        case .length(let length, let buffered):
            if buffered {
                let buffer = NSMutableData(length: tag % 3)!
                buffers.withLock { $0[tag] = (buffer, tag % 3) }
                sock.readData(
                    toLength: UInt(length),
                    withTimeout: timeout,
                    buffer: buffer,
                    bufferOffset: UInt(tag % 3),
                    tag: tag
                )
            } else {
                sock.readData(toLength: UInt(length), withTimeout: timeout, tag: tag)
            }
        case .separator(let separator, let max):
            sock.readData(to: Data(separator), withTimeout: timeout, maxLength: UInt(max), tag: tag)
        }
    }

    // Sendable: NSMutableData is touched by the socket (on the loop) and then the delegate, in that order.
    private let buffers = LockedBox<[Int: (NSMutableData, Int)]>([:])

    private func startEnding(_ sock: GCDAsyncSocket) {
        switch schedule.ending {
        case .disconnect:
            sock.disconnect()
        case .disconnectAfterReading(let count):
            issuing.lock()
            for index in 0..<count {
                let read: SocketSchedule.Read =
                    index % 2 == 0
                    ? .length(index + 1, buffered: false) : .separator(schedule.stream.separator, maxLength: 0)
                issueRead(sock, read, tag: model.withLock { $0.issue(read) }, timeout: -1)
            }
            issuing.unlock()
            sock.disconnectAfterReading()
        case .disconnectAfterWriting(let size):
            let (tag, bytes) = model.withLock { $0.issueWrite(size: size) }
            sock.write(bytes, withTimeout: -1, tag: tag)
            sock.disconnectAfterWriting()
        case .peerCloses(let length):
            let read = SocketSchedule.Read.length(max(length - model.withLock { $0.offset }, 0) + 1, buffered: false)
            issueRead(sock, read, tag: model.withLock { $0.issue(read) }, timeout: -1)
        case .stall:
            needsTask.set(())
        case .release:
            holder.withLock { $0 = nil }
        }
    }

    /// The stall ending, from the test's task: the peer has stopped after `sent` bytes; a read wants one more.
    func issueStallRead(_ sock: GCDAsyncSocket, sent: Int, timeout: TimeInterval) {
        let read = SocketSchedule.Read.length(sent - model.withLock { $0.offset } + 1, buffered: false)
        let tag = model.withLock { $0.issue(read) }
        checks.withLock {
            $0.stallTag = tag
            $0.stallIssued = .now
        }
        sock.readData(toLength: UInt(sent - model.withLock { $0.offset } + 1), withTimeout: timeout, tag: tag)
    }

    // MARK: checking

    /// Runs a callback's checks around `body`: its thread, no two at once, none after the disconnect.
    private func callback(_ name: String, _ body: () -> Void) {
        let thread = Thread.current
        let refused = checks.withLock { c -> Bool in
            if c.disconnects > 0 {
                c.lateCallbacks.append("\(name) after the disconnect")
                return true
            }
            switch delivery {
            case .delegateQueue:
                if DispatchQueue.getSpecific(key: queueKey) != true {
                    c.lateCallbacks.append("\(name) off the delegate queue")
                }
            case .eventLoop:
                let current = MultiThreadedEventLoopGroup.currentEventLoop
                if loop == nil { loop = current }
                if current == nil || current !== loop { c.lateCallbacks.append("\(name) off the socket's event loop") }
            }
            if let other = c.inCallback, other !== thread {
                c.lateCallbacks.append("\(name) concurrently with another")
            }
            return false
        }
        guard !refused else { return }
        let outer = checks.withLock { c -> Thread? in
            defer { c.inCallback = thread }
            return c.inCallback
        }
        body()
        checks.withLock { $0.inCallback = outer }
    }

    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        callback("didConnect") { fill(sock) }
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        callback("didRead(\(tag))") {
            let buffer = buffers.withLock { $0.removeValue(forKey: tag) }
            checks.withLock { c in
                if let first = c.firstSecureRead, tag >= first, c.secured != 1 {
                    c.lateCallbacks.append(
                        "read \(tag), issued after startTLS, completed after \(c.secured) handshakes"
                    )
                }
            }
            model.withLock { $0.didRead(tag: tag, data: data, buffer: buffer) }
            if tag % 7 == 3 {
                let progress = sock.readProgress
                let (done, issued) = model.withLock { ($0.completed, $0.reads.count) }
                if let progress, !(done..<issued).contains(progress.tag) {
                    model.withLock { $0.violation("progress names read \(progress.tag) outside \(done)..<\(issued)") }
                }
            }
            fill(sock)
        }
    }

    func socket(_ sock: GCDAsyncSocket, didWriteDataWithTag tag: Int) {
        callback("didWrite(\(tag))") { model.withLock { $0.didWrite(tag: tag) } }
    }

    func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    )
        -> TimeInterval
    {
        var answer: TimeInterval = 0
        callback("shouldTimeoutRead(\(tag))") {
            answer = checks.withLock { c -> TimeInterval in
                c.timeoutAnswers += 1
                guard c.timeoutAnswers == 1, case .stall(_, let granted) = schedule.ending else { return 0 }
                return granted
            }
        }
        return answer
    }

    func socketDidSecure(_ sock: GCDAsyncSocket) {
        callback("didSecure") {
            checks.withLock { c in
                c.secured += 1
                if c.secured > 1 || c.firstSecureRead == nil || schedule.tls == nil {
                    c.lateCallbacks.append(
                        "didSecure number \(c.secured) (startTLS issued: \(c.firstSecureRead != nil))"
                    )
                }
            }
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        let error = err as? GCDAsyncSocketError
        callback("didDisconnect") {
            let (requested, stallTag) = checks.withLock { c -> (Bool, Int?) in
                c.closedAt = .now
                c.closeError = .some(error)
                let requested: Bool
                switch schedule.ending {
                case .disconnect, .disconnectAfterReading, .disconnectAfterWriting: requested = c.endingStarted
                default: requested = false
                }
                return (requested, c.stallTag)
            }
            model.withLock { $0.didClose(error: error, requested: requested, timedOutTag: stallTag) }
        }
        checks.withLock { $0.disconnects += 1 }
        ended.set(())
        // A life that ended before its steps did (a read past its maximum) wakes a test waiting to end it.
        needsTask.set(())
    }
}
