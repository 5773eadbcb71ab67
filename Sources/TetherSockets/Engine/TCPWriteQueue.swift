import DequeModule
import NIOCore

/// The write side of a TCP connection as a value: the queued writes (held until the channel is active or a TLS
/// handshake completed, then handed to the channel in order), their progress and timeouts, and the async face's
/// write window (tasks wait until fewer than `WriteAdmission.resumeBelow` bytes are ahead of their write). No I/O:
/// the channel handler hands bytes to the channel when told, and reports back what the channel wrote.
struct TCPWriteQueue<Task> {
    /// A queued write.
    struct Request {
        let id: UInt64
        let total: Int
        var written = 0
        /// The bytes, while held back (not yet handed to the channel).
        var pending: ByteBuffer?
        let timeout: TimeAmount?
        var elapsed: TimeAmount = .zero
        var timerArmed = false
        var waiter: WriteWaiter<Task>
    }

    /// An async-face task waiting for room in the window.
    struct Waiting {
        let id: UInt64
        /// Stream offset of the write's first byte: it is accepted once fewer than the window's bytes are ahead.
        let start: Int
        let task: Task
    }

    /// The timer the head write wants running (delegate face).
    struct Timer: Equatable {
        let id: UInt64
        let duration: TimeAmount
    }

    /// What the channel's report of written bytes means.
    enum Progress {
        /// Part of the head write went out (delegate face reports it).
        case partial(tag: Int?, length: Int)
        /// The head write completed.
        case completed(WriteWaiter<Task>)
        /// Not the head write (a report after the queue was emptied).
        case ignored
    }

    // Deques, as in `TCPReadQueue`: the head request is read and changed in place, not copied through the generic
    // type's value witnesses; an idle connection's empty deques allocate nothing.
    private(set) var requests = Deque<Request>()
    private(set) var waiting = Deque<Waiting>()
    /// Writes queued after this id are held until the TLS handshake completes.
    var tlsBarrier: UInt64?
    private(set) var timer: Timer?
    /// The last write handed to the channel (writes are handed in order; later ones are held).
    private(set) var lastHandedID: UInt64 = 0
    /// Async face: stream offsets of the bytes of every write queued so far, and of those the channel wrote.
    private(set) var enqueuedTotal = 0
    private(set) var writtenTotal = 0

    var isEmpty: Bool { requests.isEmpty }
    var headID: UInt64? { requests.isEmpty ? nil : requests[requests.startIndex].id }
    /// The tags of the queued delegate writes, in order.
    var pendingTags: [Int] { requests.compactMap(\.waiter.tag) }

    /// Whether write `id` was queued behind a pending TLS upgrade.
    func isBehindTLS(_ id: UInt64) -> Bool {
        guard let tlsBarrier else { return false }
        return id > tlsBarrier
    }

    /// Queues a write. Returns the bytes to hand to the channel now (when it `canSend` and no TLS barrier holds the
    /// write back); otherwise they are held. A task that waits for the window joins `waiting`.
    mutating func enqueue(
        id: UInt64,
        bytes: ByteBuffer,
        timeout: TimeAmount?,
        waiter: WriteWaiter<Task>,
        canSend: Bool
    ) -> ByteBuffer? {
        let sendsNow = canSend && !isBehindTLS(id)
        var request = Request(
            id: id,
            total: bytes.readableBytes,
            pending: sendsNow ? nil : bytes,
            timeout: timeout,
            waiter: waiter
        )
        if case .task(let task) = waiter {
            // The task waits (if it does) in `waiting`, not in the queue.
            request.waiter = .task(nil)
            if let task { waiting.append(Waiting(id: id, start: enqueuedTotal, task: task)) }
            enqueuedTotal += request.total
        }
        requests.append(request)
        guard sendsNow else { return nil }
        lastHandedID = id
        return bytes
    }

    /// The held writes that may go now (the channel became active, or the handshake completed), in order, up to a
    /// pending TLS barrier.
    mutating func takeHeld() -> [(id: UInt64, bytes: ByteBuffer)] {
        var out: [(id: UInt64, bytes: ByteBuffer)] = []
        for index in requests.indices {
            guard !isBehindTLS(requests[index].id) else { break }
            if let bytes = requests[index].pending {
                requests[index].pending = nil
                lastHandedID = requests[index].id
                out.append((requests[index].id, bytes))
            }
        }
        return out
    }

    /// The channel wrote `length` bytes of write `id`.
    mutating func written(id: UInt64, length: Int) -> Progress {
        guard headID == id else { return .ignored }
        let head = requests.startIndex
        writtenTotal += length
        requests[head].written += length
        guard requests[head].written >= requests[head].total else {
            return .partial(tag: requests[head].waiter.tag, length: length)
        }
        let request = requests.removeFirst()
        timer = nil
        return .completed(request.waiter)
    }

    /// The next task whose write is handed to the channel and has fewer than `window` bytes ahead of it: it stops
    /// waiting. Call until nil (one at a time: no array per write on the hot path).
    mutating func nextAccepted(window: Int) -> Waiting? {
        guard let first = waiting.first, first.id <= lastHandedID, first.start - writtenTotal < window else {
            return nil
        }
        return waiting.removeFirst()
    }

    /// The task waiting for write `id` stops waiting (timeout, cancellation); the bytes stay queued.
    mutating func abandon(id: UInt64) -> Task? {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        return waiting.remove(at: index).task
    }

    /// Arms the head write's timer once, when it is a delegate write with a timeout that the channel has.
    mutating func armTimerIfNeeded() {
        guard timer == nil, !requests.isEmpty else { return }
        let head = requests.startIndex
        guard !requests[head].timerArmed, !isBehindTLS(requests[head].id), let timeout = requests[head].timeout,
            requests[head].waiter.tag != nil
        else { return }
        requests[head].timerArmed = true
        timer = Timer(id: requests[head].id, duration: max(timeout, .zero))
    }

    /// The head write's timer fired after `duration`.
    mutating func timerFired(id: UInt64, duration: TimeAmount) -> (tag: Int, elapsed: TimeAmount, bytesDone: Int)? {
        guard timer?.id == id, var request = requests.first, request.id == id, let tag = request.waiter.tag else {
            return nil
        }
        timer = nil
        request.elapsed = request.elapsed + duration
        requests[requests.startIndex] = request
        return (tag, request.elapsed, request.written)
    }

    /// The delegate answered for write `id`: more time (> 0, true) or close (false); nil when the write is gone.
    mutating func timeoutAnswered(id: UInt64, extension time: TimeAmount) -> Bool? {
        guard headID == id else { return nil }
        guard time > .zero else { return false }
        timer = Timer(id: id, duration: time)
        return true
    }

    /// Empties the queue (close, `disconnectAfterReading`): returns the waiting tasks, in order.
    mutating func removeAll() -> [Task] {
        defer {
            requests.removeAll()
            waiting.removeAll()
            timer = nil
        }
        return waiting.map(\.task)
    }

    /// The head write's progress, for the synchronous getters.
    var progress: GCDAsyncSocket.IOProgress? {
        guard !requests.isEmpty else { return nil }
        let head = requests.startIndex
        return GCDAsyncSocket.IOProgress(
            tag: requests[head].waiter.tag ?? 0,
            bytesDone: requests[head].written,
            total: requests[head].total
        )
    }
}
