import Foundation

/// The receive model of ``AsyncUdpSocket`` as a value (the original's exact rules, no I/O): `receive(withTimeout:tag:)`
/// requests queue FIFO and one is active at a time; a datagram is read only for the active request, offered to the
/// delegate, and either taken (the request completes, the next becomes active) or refused (discarded; the same
/// request stays active with its timer running); a timeout ends the active request and activates the next.
///
/// The socket keeps it under its lock; ``AsyncUdpSocket`` executes what it answers (arm a timer, read one datagram,
/// offer one to the delegate on the run loop).
struct AsyncUdpReceiveQueue {
    /// One `receive(withTimeout:tag:)`.
    struct Request: Equatable {
        var id: UInt64
        var tag: Int
        /// Seconds from activation; negative: never.
        var timeout: TimeInterval
    }

    /// A datagram read for the active request, waiting to be offered on the run loop.
    struct Datagram {
        var data: Data
        var host: String
        var port: UInt16
    }

    private(set) var waiting: [Request] = []
    private(set) var active: Request?
    /// Read from the engine, not yet offered (normally at most one: one read per active request).
    private(set) var held: [Datagram] = []
    /// A read for the active request is outstanding in the engine.
    private(set) var isReading = false
    private var lastID: UInt64 = 0

    /// No request is active or waiting.
    var isDrained: Bool { active == nil && waiting.isEmpty }

    /// Whether the engine must be asked for one datagram now: a request is active, none is held or being read.
    var needsRead: Bool { active != nil && held.isEmpty && !isReading }

    /// Whether a held datagram can be offered to the delegate now.
    var hasOffer: Bool { active != nil && !held.isEmpty }

    /// Queues a request; returns it when it became active at once (the caller arms its timer).
    mutating func enqueue(tag: Int, timeout: TimeInterval) -> Request? {
        lastID &+= 1
        waiting.append(Request(id: lastID, tag: tag, timeout: timeout))
        return active == nil ? activateNext() : nil
    }

    /// The engine was asked for a datagram (`success` false: it could not be, e.g. no port yet; ask again later).
    mutating func readStarted(_ success: Bool) {
        isReading = success
    }

    /// The engine delivered a datagram.
    mutating func arrived(_ datagram: Datagram) {
        isReading = false
        held.append(datagram)
    }

    /// The next datagram to offer to the delegate for the active request, taken out of the queue.
    mutating func takeOffer() -> (Request, Datagram)? {
        guard let active, !held.isEmpty else { return nil }
        return (active, held.removeFirst())
    }

    /// The delegate answered the offer made for request `id`; returns the request that became active, if any (the
    /// caller arms its timer). A refusal keeps `id` active.
    mutating func answered(_ id: UInt64, accepted: Bool) -> Request? {
        guard accepted, active?.id == id else { return nil }
        active = nil
        return activateNext()
    }

    /// Request `id`'s timer fired: returns the expired request (nil for a stale timer) and the one activated after it.
    mutating func timedOut(_ id: UInt64) -> (expired: Request, next: Request?)? {
        guard let expired = active, expired.id == id else { return nil }
        active = nil
        return (expired, activateNext())
    }

    /// Close: every request and held datagram is dropped, without callbacks.
    mutating func removeAll() {
        waiting.removeAll()
        active = nil
        held.removeAll()
        isReading = false
    }

    private mutating func activateNext() -> Request? {
        guard !waiting.isEmpty else { return nil }
        active = waiting.removeFirst()
        return active
    }
}
