import Foundation
import NIOCore

/// The state of one TCP connection as a value: its phase, its TLS upgrade, its read and write queues, and every
/// decision about them (what an operation may do in this phase, when a close is due, what the end of the channel
/// means). The channel handler (``SocketEngine``) feeds it NIO's events and the faces' requests and executes what it
/// answers; it holds no NIO object, so tests drive it as a table (`TCPStateMachineTests`).
struct TCPStateMachine<ReadTask, WriteTask> {
    /// The connection's phase.
    enum Phase {
        /// Operations queue up; nothing goes out until the channel is active.
        case waitingForChannel
        /// Serving both queues; `halfClosed` once `halfClose` sent the FIN (writes are refused).
        case open(halfClosed: Bool)
        /// Async face `close()`: reads ended; writes already accepted go out, then the connection closes.
        case closingGracefully
        /// Async face: both directions ended cleanly and the channel is gone; buffered reads are still served.
        case peerGone
        /// Ended: with this error, or nil on request.
        case closed(GCDAsyncSocketError?)
    }

    /// What the end of the channel means.
    enum ChannelEnd {
        /// Close with this error now.
        case close(GCDAsyncSocketError)
        /// Serve what is buffered to the queued reads, then the end of the stream (async face); writes are refused.
        case serveBufferedReads
        /// Serve what is buffered, then close with `.closedByPeer` (delegate face).
        case serveBufferedReadsThenClose
        /// Already closed.
        case ignore
    }

    let policy: EnginePolicy
    private(set) var phase = Phase.waitingForChannel
    private(set) var tls = TLSUpgradeState.none
    private(set) var closesAfter: TCPCloseAfter = []
    var reads: TCPReadQueue<ReadTask>
    var writes = TCPWriteQueue<WriteTask>()
    /// The handler stopped reading from the kernel (back-pressure): a read served from the buffer off the loop
    /// must wake the loop when it makes room.
    var isReadingPaused = false
    /// The id of the last operation queued (reads, writes and TLS markers share one sequence).
    private(set) var lastID: UInt64 = 0

    init(policy: EnginePolicy) {
        self.policy = policy
        self.reads = TCPReadQueue(policy: policy)
    }

    // MARK: phase

    /// The channel serves the queues: open, closing gracefully, or with only buffered reads left.
    var isActive: Bool {
        switch phase {
        case .open, .closingGracefully, .peerGone: return true
        case .waitingForChannel, .closed: return false
        }
    }

    var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    /// The id for the next operation.
    mutating func nextID() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    /// The channel became active. False when it was not waiting for one (already active, or closed).
    mutating func activate() -> Bool {
        guard case .waitingForChannel = phase else { return false }
        phase = .open(halfClosed: false)
        return true
    }

    /// Why a read cannot be queued now (nil: it can).
    var readRefusal: GCDAsyncSocketError? {
        switch phase {
        case .closed(let error): return error ?? .closedLocally
        case .closingGracefully: return .closedLocally
        case .waitingForChannel, .open, .peerGone: return nil
        }
    }

    /// Why a write cannot be queued now (nil: it can).
    var writeRefusal: GCDAsyncSocketError? {
        switch phase {
        case .closed(let error): return error ?? .closedLocally
        case .closingGracefully, .open(halfClosed: true): return .closedLocally
        case .peerGone: return .closedByPeer
        case .waitingForChannel, .open(halfClosed: false): return nil
        }
    }

    /// Ends the connection. False when it had ended already.
    mutating func close(error: GCDAsyncSocketError?) -> Bool {
        if case .closed = phase { return false }
        phase = .closed(error)
        tls = .none
        reads.tlsBarrier = nil
        writes.tlsBarrier = nil
        return true
    }

    /// The caller closed a connection that had ended already (an I/O error, the peer): later operations are refused
    /// with `.closed`, as after any close of the caller's (API.md §2.7), not with what ended it.
    mutating func closedByCaller() {
        if case .closed(.some) = phase { phase = .closed(nil) }
    }

    /// `halfClose`: sends the FIN. False when the connection is not open (or already half-closed).
    mutating func halfClose() -> Bool {
        guard case .open(halfClosed: false) = phase else { return false }
        phase = .open(halfClosed: true)
        return true
    }

    /// Async face `close()`: true when accepted writes must go out first (the phase becomes closing); false to
    /// close now (nothing to wait for, not active yet, or a TLS upgrade pending).
    mutating func closeGracefully() -> Bool {
        guard case .open = phase, !tls.isPending, !writes.isEmpty else { return false }
        phase = .closingGracefully
        return true
    }

    /// The original's `disconnectAfter…`: records the request; true when the queues it waits for are empty now.
    mutating func closeAfter(_ request: TCPCloseAfter) -> Bool {
        closesAfter.formUnion(request)
        return isDrainedForClose
    }

    /// `disconnectAfterWriting`: records the request (the reads were dropped, and no read can be queued any more)
    /// and drops what arrives from now on, unless a TLS upgrade still needs the peer's bytes or the face keeps them
    /// for an error close to report (the RunLoop era); true when the writes are done now.
    mutating func closeAfterWriting() -> Bool {
        closesAfter.formUnion(.writes)
        if !closesAfter.contains(.reads), !tls.isPending, !reads.policy.keepsInputAfterWritingClose {
            reads.discardInput()
        }
        return isDrainedForClose
    }

    /// A read or write completed: true when a `disconnectAfter…` or a graceful close is now due.
    var isDrainedForClose: Bool {
        var waitsForWrites = closesAfter.contains(.writes)
        if case .closingGracefully = phase { waitsForWrites = true }
        guard closesAfter.contains(.reads) || waitsForWrites else { return false }
        if closesAfter.contains(.reads) && reads.headID != nil { return false }
        if waitsForWrites && !writes.isEmpty { return false }
        return true
    }

    /// The channel went inactive.
    mutating func channelEnded() -> ChannelEnd {
        if case .handshaking = tls, isActive {
            return .close(.tls("The peer closed the connection during the TLS handshake", underlying: nil))
        }
        if isActive && !policy.failuresCloseConnection {
            phase = .peerGone
            reads.endOfInput()
            return .serveBufferedReads
        }
        if isClosed { return .ignore }
        if reads.inputClosed { return .close(.closedByPeer) }
        reads.endOfInput()
        return .serveBufferedReadsThenClose
    }

    // MARK: reads served off the loop

    /// A delegate-face read issued on the delegate queue, served from the bytes already buffered without a visit to
    /// the event loop: only when nothing could order before it (no read queued, no TLS upgrade or close pending, the
    /// stream not at its end). Returns the read's bytes (the caller owns them: `deliveredData`), and whether the loop
    /// must be woken to read from the kernel again; nil when the read must take the queue.
    mutating func readFromBuffer(_ kind: ReadKind) -> (bytes: Data, wakesLoop: Bool)? {
        guard case .open = phase, closesAfter.isEmpty, !tls.isPending,
            let bytes = reads.takeIfReady(kind)
        else { return nil }
        let wakesLoop = isReadingPaused && reads.bufferedBytes < SocketEngine.pauseThreshold
        return (bytes.deliveredData, wakesLoop)
    }

    // MARK: TLS

    /// `startTLS`: nil when accepted (the marker is the last operation id); else why not.
    mutating func requestTLS() -> GCDAsyncSocketError? {
        if case .closed = phase { return .closedLocally }
        guard tls == .none else { return .badConfig("The connection is already secured or securing") }
        tls = .requested(barrier: lastID)
        reads.tlsBarrier = lastID
        writes.tlsBarrier = lastID
        return nil
    }

    /// True when the handshake should start now: active, asked for, and both queues reached the marker (the phase
    /// becomes preparing: fetch the context).
    mutating func tlsReadyToStart() -> Bool {
        guard isActive, case .requested(let barrier) = tls else { return false }
        if let read = reads.headID, read <= barrier { return false }
        if let write = writes.headID, write <= barrier { return false }
        tls = .preparing(barrier: barrier)
        return true
    }

    /// The context is ready: true when the handler should join the pipeline now.
    mutating func tlsContextReady() -> Bool {
        guard isActive, case .preparing(let barrier) = tls else { return false }
        tls = .handshaking(barrier: barrier, trustRejected: false)
        return true
    }

    /// A manual trust evaluation said no: the handshake's error is the rejection.
    mutating func tlsTrustRejected() {
        guard case .handshaking(let barrier, _) = tls else { return }
        tls = .handshaking(barrier: barrier, trustRejected: true)
    }

    /// The error a channel error means now.
    func channelError(_ error: any Error) -> GCDAsyncSocketError {
        if case .handshaking(_, trustRejected: true) = tls {
            return .tls(GCDAsyncSocketError.peerCertificateRejected.message, underlying: error)
        }
        return GCDAsyncSocketError.wrapping(error, function: "read")
    }

    /// The handshake completed: true when the connection is now secure (operations behind the marker go on).
    mutating func tlsHandshakeCompleted() -> Bool {
        guard isActive, case .handshaking = tls else { return false }
        tls = .secured
        reads.tlsBarrier = nil
        writes.tlsBarrier = nil
        return true
    }
}
