import DequeModule
import NIOCore

/// The read side of a TCP connection as a value: the bytes received and not yet consumed, the queued reads, and
/// the decisions about them. No I/O: events go in (bytes, end of stream, a timer fired, a delegate's answer), and
/// ``next()`` hands out what to do, one action at a time, until it says to stop. The channel handler executes each
/// action and asks again, so that a delegate called inline can queue the next read in between (the seed's
/// header-then-body pattern) without re-entering the queue.
///
/// Bytes are consumed only when a read completes: a failed read (async face) loses nothing, and a closing error
/// (delegate face) can carry every undelivered byte.
struct TCPReadQueue<Task> {
    /// A queued read.
    struct Request {
        let id: UInt64
        var matcher: ReadMatcher
        let timeout: TimeAmount?
        var elapsed: TimeAmount = .zero
        /// Bytes already reported as partial progress.
        var reported = 0
        let waiter: ReadWaiter<Task>
    }

    /// The timer the head read wants running: the handler arms it, and cancels one that no longer matches.
    struct Timer: Equatable {
        let id: UInt64
        let duration: TimeAmount
    }

    /// What to do next.
    enum Action {
        /// A read completed with `bytes`.
        case deliver(ByteBuffer, ReadWaiter<Task>)
        /// An async `readAvailable` met the end of the stream with nothing buffered: resume it with `nil`.
        case endOfStream(Task)
        /// A task's or frame's read failed (timeout, maximum length, end of stream); its bytes stay buffered.
        case fail(ReadWaiter<Task>, any Error)
        /// A delegate-face length or separator read made progress without completing.
        case partial(tag: Int, length: Int)
        /// The peer closed its side while the connection stays open (reported once).
        case readStreamClosed
        /// A delegate-face read timed out: ask the delegate for an extension (reads pause until it answers).
        case askTimeout(tag: Int, elapsed: TimeAmount, bytesDone: Int)
        /// The connection must close with this error.
        case close(GCDAsyncSocketError)
        /// Stop: the head read waits behind a TLS upgrade (start the handshake if the writes reached it too).
        case awaitTLS
        /// Stop: the head read waits for more bytes.
        case awaitBytes
        /// Stop: no read is queued (or reads pause for a delegate's timeout answer).
        case idle
    }

    let policy: EnginePolicy
    /// The bytes received and not consumed: reads match against its front; later socket reads wait behind it,
    /// unjoined, until a read needs them.
    private(set) var receiveBuffer = ReceiveBuffer()
    // A deque, not NIO's `CircularBuffer`: its subscript reads and changes the head request in place, where the
    // circular buffer's getter copies the whole request (waiter included) through the generic type's value
    // witnesses on every step. Empty, it allocates nothing.
    private(set) var requests = Deque<Request>()
    private(set) var inputClosed = false
    /// Every byte that arrives is dropped: no read can come any more (``discardInput()``).
    private(set) var discardsInput = false
    /// A delegate was asked whether the head read may have more time: reads wait for its answer.
    private(set) var pausedForTimeoutQuery = false
    private var closureReported = false
    /// Completed reads handed out and not yet delivered by the handler: a read served off the loop waits for them,
    /// so that callbacks keep the order of the reads.
    private(set) var deliveriesInFlight = 0
    /// The head read's timer, when it should be running.
    private(set) var timer: Timer?
    /// Reads queued after this id wait for the TLS handshake.
    var tlsBarrier: UInt64?
    /// Frames decoded ahead of a `frames` iterator: their bytes are out of the receive buffer until taken or reclaimed.
    private var framesAhead: (any ReclaimableFrames)?

    init(policy: EnginePolicy) {
        self.policy = policy
    }

    // MARK: processing

    /// The next thing to do for the queued reads. Call it again after executing every action but the three that
    /// stop (`.awaitTLS`, `.awaitBytes`, `.idle`) and `.close`.
    mutating func next() -> Action {
        guard !pausedForTimeoutQuery else { return .idle }
        // The head request is read and changed in place (`requests[head]`), and moved out when it completes.
        while !requests.isEmpty {
            let head = requests.startIndex
            if let ahead = framesAhead {
                // Another read reached the connection: the frames not taken yet go back, in front of the buffer.
                framesAhead = nil
                if let reclaimed = ahead.reclaim() { receiveBuffer.prepend(reclaimed) }
            }
            if isBehindTLS(requests[head].id) { return .awaitTLS }
            if case .frame(let operation) = requests[head].waiter {
                // A frame may span the socket's reads: the decoder sees every byte, joined.
                receiveBuffer.joinAll()
                let inputClosed = inputClosed
                guard receiveBuffer.withFront({ operation.attempt(&$0, inputClosed: inputClosed) }) else {
                    armTimerIfNeeded()
                    return .awaitBytes
                }
                requests.removeFirst()
                timer = nil
                framesAhead = operation.decodedAhead
                continue
            }
            switch requests[head].matcher.match(receiveBuffer.front) {
            case .complete(let count):
                timer = nil
                let bytes = receiveBuffer.readFront(count)
                let request = requests.removeFirst()
                deliveriesInFlight += 1
                return .deliver(bytes, request.waiter)
            case .incomplete(let bytesDone):
                // The read needs more than the front holds: join the next socket read and match again. (A read of
                // what is available joins only into an empty front, which adopts the read without a copy.)
                if joinBehind(for: requests[head].matcher.kind) { continue }
                let reported = requests[head].reported
                if policy.reportsProgress, bytesDone > reported, requests[head].matcher.kind.reportsPartialProgress,
                    case .delegate(let tag, _) = requests[head].waiter
                {
                    requests[head].reported = bytesDone
                    return .partial(tag: tag, length: bytesDone - reported)
                }
                guard inputClosed else {
                    armTimerIfNeeded()
                    return .awaitBytes
                }
                if policy.autoDisconnectOnClosedReadStream { return .close(.closedByPeer) }
                if case .task(let task) = requests[head].waiter {
                    let request = requests.removeFirst()
                    timer = nil
                    if case .available = request.matcher.kind, receiveBuffer.readableBytes == 0 {
                        return .endOfStream(task)
                    }
                    return .fail(request.waiter, GCDAsyncSocketError.closedByPeer)
                }
                armTimerIfNeeded()
                if !closureReported {
                    closureReported = true
                    return .readStreamClosed
                }
                return .idle
            case .maxedOut:
                if policy.failuresCloseConnection { return .close(.readMaxedOut) }
                let request = requests.removeFirst()
                timer = nil
                return .fail(request.waiter, GCDAsyncSocketError.readMaxedOut)
            }
        }
        if inputClosed && (receiveBuffer.readableBytes == 0 || policy.closesAtEndOfStreamWithUnreadBytes) {
            if policy.autoDisconnectOnClosedReadStream { return .close(.closedByPeer) }
            if !closureReported {
                closureReported = true
                return .readStreamClosed
            }
        }
        return .idle
    }

    private mutating func armTimerIfNeeded() {
        guard timer == nil, !requests.isEmpty, let timeout = requests[requests.startIndex].timeout else { return }
        timer = Timer(id: requests[requests.startIndex].id, duration: max(timeout, .zero))
    }

    // MARK: events

    /// Queues a read. Returns true when it is the only one (processing should run).
    mutating func enqueue(id: UInt64, kind: ReadKind, timeout: TimeAmount?, waiter: ReadWaiter<Task>) -> Bool {
        requests.append(Request(id: id, matcher: ReadMatcher(kind: kind), timeout: timeout, waiter: waiter))
        return requests.count == 1
    }

    /// A read that no queued read precedes, completed from the buffer at once when the bytes are there (nil: it must
    /// be queued). Not at the end of the stream, nor while a delegate decides a timeout, nor with frames decoded
    /// ahead: those cases take the queue.
    mutating func takeIfReady(_ kind: ReadKind) -> ByteBuffer? {
        guard requests.isEmpty, deliveriesInFlight == 0, !inputClosed, !pausedForTimeoutQuery, framesAhead == nil
        else { return nil }
        var matcher = ReadMatcher(kind: kind)
        while true {
            switch matcher.match(receiveBuffer.front) {
            case .complete(let count): return receiveBuffer.readFront(count)
            case .incomplete: guard joinBehind(for: kind) else { return nil }
            case .maxedOut: return nil
            }
        }
    }

    /// The handler handed a completed read to its waiter (after a `.deliver`).
    mutating func delivered() {
        deliveriesInFlight -= 1
    }

    /// Joins bytes waiting behind the receive buffer's front for a read of `kind` that the front cannot complete:
    /// a length read takes only the bytes it misses, other reads the whole next socket read. False when none wait.
    private mutating func joinBehind(for kind: ReadKind) -> Bool {
        if case .length(let length) = kind {
            return receiveBuffer.joinNext(atMost: length - receiveBuffer.front.readableBytes)
        }
        return receiveBuffer.joinNext()
    }

    /// Bytes arrived from the channel (dropped when no read can come any more).
    mutating func received(_ incoming: ByteBuffer) {
        guard !discardsInput else { return }
        receiveBuffer.append(incoming)
    }

    /// No read can be queued any more (`disconnectAfterWriting`): the bytes buffered are dropped, and so is every
    /// byte that arrives from now on. Reading goes on, so that a peer that keeps sending does not fill the kernel's
    /// buffer while the last writes go out, and the close finds nothing unread more often (a FIN, not a reset).
    mutating func discardInput() {
        discardsInput = true
        receiveBuffer = ReceiveBuffer()
        framesAhead = nil
    }

    /// Every byte received and not consumed.
    var bufferedBytes: Int { receiveBuffer.readableBytes }

    /// The peer closed its side: no more bytes.
    mutating func endOfInput() {
        inputClosed = true
    }

    /// Takes every buffered byte, joined (to feed a TLS handler as ciphertext, or to carry on a closing error).
    mutating func takeBuffer() -> ByteBuffer {
        receiveBuffer.takeAll()
    }

    /// The id of the head read.
    var headID: UInt64? { requests.isEmpty ? nil : requests[requests.startIndex].id }

    /// Whether a read is queued.
    var hasRequests: Bool { !requests.isEmpty }

    /// Whether read `id` was queued behind a pending TLS upgrade.
    func isBehindTLS(_ id: UInt64) -> Bool {
        guard let tlsBarrier else { return false }
        return id > tlsBarrier
    }

    /// The head read's timer fired after `duration`.
    mutating func timerFired(id: UInt64, duration: TimeAmount) -> Action {
        guard timer?.id == id, var request = requests.first, request.id == id else { return .idle }
        timer = nil
        request.elapsed = request.elapsed + duration
        requests[requests.startIndex] = request
        switch request.waiter {
        case .task, .frame:
            requests.removeFirst()
            return .fail(request.waiter, GCDAsyncSocketError.readTimeout)
        case .delegate(let tag, _):
            pausedForTimeoutQuery = true
            return .askTimeout(tag: tag, elapsed: request.elapsed, bytesDone: bytesDone(request.matcher))
        }
    }

    /// The delegate answered a timeout query for read `id`: more time (> 0), or close. `.idle` when no query was
    /// pending or the read is gone; `.awaitBytes` when it goes on (processing should run).
    mutating func timeoutAnswered(id: UInt64, extension time: TimeAmount) -> Action {
        guard pausedForTimeoutQuery else { return .idle }
        pausedForTimeoutQuery = false
        guard headID == id else { return .idle }
        guard time > .zero else { return .close(.readTimeout) }
        timer = Timer(id: id, duration: time)
        return .awaitBytes
    }

    /// A task stopped waiting for read `id`: it leaves the queue, consuming nothing. Returns its waiter and whether
    /// it was the head (processing should run again).
    mutating func cancel(id: UInt64) -> (waiter: ReadWaiter<Task>, wasHead: Bool)? {
        guard let index = requests.firstIndex(where: { $0.id == id }) else { return nil }
        let wasHead = index == requests.startIndex
        let request = requests.remove(at: index)
        if wasHead { timer = nil }
        return (request.waiter, wasHead)
    }

    /// Empties the queue (close): returns the waiters in order; the bytes stay for ``unreadBytes``.
    mutating func removeAll() -> [ReadWaiter<Task>] {
        defer {
            requests.removeAll()
            timer = nil
        }
        return requests.map(\.waiter)
    }

    /// The tags of the queued delegate reads, in order.
    var pendingTags: [Int] { requests.compactMap(\.waiter.tag) }

    /// The head read's progress, for the synchronous getters.
    var progress: GCDAsyncSocket.IOProgress? {
        guard !requests.isEmpty else { return nil }
        let head = requests.startIndex
        return GCDAsyncSocket.IOProgress(
            tag: requests[head].waiter.tag ?? 0,
            bytesDone: bytesDone(requests[head].matcher),
            total: requests[head].matcher.kind.total
        )
    }

    private func bytesDone(_ matcher: ReadMatcher) -> Int {
        var matcher = matcher
        // Against the front: a read that waits has every byte joined to it (`next()` joins before it waits).
        switch matcher.match(receiveBuffer.front) {
        case .complete(let count): return count
        case .incomplete(let done): return done
        case .maxedOut: return receiveBuffer.front.readableBytes
        }
    }
}

extension ReadKind {
    /// Length and separator reads report partial progress; "available" reads complete with the first bytes.
    var reportsPartialProgress: Bool {
        switch self {
        case .available: return false
        case .length, .separator: return true
        }
    }
}
