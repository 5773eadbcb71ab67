import NIOCore
import NIOSSL
import TetherConcurrency
import TetherTestSupport

/// The ``TLSStreamingPeer``'s handler, on its channel's loop: sends the simulated stream in chunks and pauses drawn
/// from a seed (waiting while the channel is not writable and while the handshake runs), checks every byte the socket
/// writes against its write stream, and puts a TLS server handler in front of itself at the switch point: once it
/// sent `plaintextSent` bytes and received `plaintextReceived`. Bytes after the plaintext in the same read are the
/// socket's hello: they go to the TLS handler.
final class TLSStreamingPeerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let stream: SimulatedStream
    private let plaintextSent: Int
    private let plaintextReceived: Int
    private let sslContext: NIOSSLContext
    private let state: LockedBox<StreamingPeer.State>
    private let receiverEnded: Latch<Int>
    private let senderStopped: Latch<Int>
    private var context: ChannelHandlerContext?
    private var tls: NIOSSLServerHandler?
    private var random = SeededGenerator(seed: 0)
    private var limit: Int?
    private var started = false
    private var sent = 0
    private var received = 0
    /// The TLS handler is in the pipeline (from the start when there is no plaintext).
    var switched = false
    private var secure = false
    /// A `sendNext` is queued (else the sender waits for writability, the switch or the handshake).
    private var scheduled = false
    private var stopped = false
    private var ended = false
    /// NIOSSL saw the TCP stream end without the socket's close_notify (a ragged end).
    private var unclean = false
    /// Both close_notify alerts were exchanged (NIOSSL may close the channel before it reports the input closed).
    private var shutdownCompleted = false
    /// The errno of a write the kernel refused (the socket's reset, seen on the sending side).
    private var writeErrno: Int32?

    init(
        stream: SimulatedStream,
        plaintextSent: Int,
        plaintextReceived: Int,
        sslContext: NIOSSLContext,
        state: LockedBox<StreamingPeer.State>,
        receiverEnded: Latch<Int>,
        senderStopped: Latch<Int>
    ) {
        self.stream = stream
        self.plaintextSent = plaintextSent
        self.plaintextReceived = plaintextReceived
        self.sslContext = sslContext
        self.state = state
        self.receiverEnded = receiverEnded
        self.senderStopped = senderStopped
    }

    /// The sender's and receiver's state, for a schedule that hung (on the channel's loop).
    var diagnosis: String {
        "handler: started \(started), sending scheduled \(scheduled), stopped \(stopped), ended \(ended), "
            + "switched \(switched), secure \(secure), sent \(sent), received \(received)"
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: sending

    func startSending(seed: UInt64, limit: Int?) {
        guard !started else { return }
        started = true
        random = SeededGenerator(seed: seed)
        self.limit = limit
        sendNext()
    }

    func stopSending() {
        stopped = true
        if !scheduled { finishSending() }
    }

    private func finishSending() {
        stopped = true
        state.withLock { $0.stopRequested = true }
        senderStopped.set(sent)
    }

    /// Resumes a sender that waits (for writability, the switch or the handshake).
    private func resume() {
        guard started, !scheduled, !stopped else { return }
        sendNext()
    }

    private func sendNext() {
        scheduled = false
        guard let context, !stopped, !ended else { return finishSending() }
        if !switched && sent == plaintextSent {
            // The plaintext is out; the switch waits for the socket's plaintext (then `resume`).
            switchIfReady()
            return
        }
        if switched && !secure { return }
        if let limit, sent >= limit {
            // All of it: the end of this side (close_notify and FIN over TLS, FIN in plaintext).
            context.close(mode: .output, promise: nil)
            return finishSending()
        }
        guard context.channel.isWritable else { return }
        let size =
            random.chance(0.7) ? Int.random(in: 1...512, using: &random) : Int.random(in: 1...70_000, using: &random)
        var end = sent + size
        if let limit { end = min(end, limit) }
        if !switched { end = min(end, plaintextSent) }
        var buffer = context.channel.allocator.buffer(capacity: end - sent)
        buffer.writeBytes(stream.bytes(sent..<end))
        // Counted and marked scheduled before the write: a chunk above the high watermark makes the channel
        // unwritable and, flushed at once, writable again inside `writeAndFlush`, whose `resume` must then find
        // this chunk sent and the next one on its way (else it sends the same bytes again).
        sent = end
        state.withLock { $0.sent = end }
        scheduled = true
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenFailure { error in
            if let error = error as? IOError, self.writeErrno == nil { self.writeErrno = error.errnoCode }
        }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: written)
        let loop = context.eventLoop.assumeIsolated()
        if random.chance(0.05) {
            let pause = SeededGenerator.pause(UInt32.random(in: 0...2_000, using: &random))
            loop.scheduleTask(in: .microseconds(Int64(pause))) { self.sendNext() }
        } else {
            loop.execute { self.sendNext() }
        }
    }

    /// Puts the TLS handler in front once both plaintexts are done.
    private func switchIfReady() {
        guard !switched, sent == plaintextSent, received == plaintextReceived, let context else { return }
        let handler = NIOSSLServerHandler(context: sslContext)
        do {
            try context.pipeline.syncOperations.addHandler(handler, position: .first)
        } catch {
            return end(errno: -1, note: "the TLS handler could not be added")
        }
        tls = handler
        switched = true
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { resume() }
        context.fireChannelWritabilityChanged()
    }

    // MARK: receiving

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if !switched {
            let plaintext = buffer.readSlice(length: min(buffer.readableBytes, plaintextReceived - received))!
            check(plaintext)
            switchIfReady()
            guard buffer.readableBytes > 0 else { return }
            // The socket's hello behind its last plaintext byte: it is the TLS handler's.
            guard switched, let tls, let tlsContext = try? context.pipeline.syncOperations.context(handler: tls) else {
                state.withLock { $0.firstWrongByte = $0.firstWrongByte ?? received }
                return
            }
            tls.channelRead(context: tlsContext, data: NIOAny(buffer))
            return
        }
        check(buffer)
    }

    private func check(_ buffer: ByteBuffer) {
        var wrong: Int?
        for (index, byte) in buffer.readableBytesView.enumerated()
        where byte != SimulatedStream.written(at: received + index) {
            wrong = received + index
            break
        }
        received += buffer.readableBytes
        let total = received
        state.withLock { state in
            state.received = total
            if state.firstWrongByte == nil { state.firstWrongByte = wrong }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // NIOTLS's `TLSUserEvent.handshakeCompleted` (by name: this target does not depend on NIOTLS).
        if String(describing: event).hasPrefix("handshakeCompleted") {
            secure = true
            resume()
        } else if String(describing: event) == "shutdownCompleted" {
            shutdownCompleted = true
        } else if case .inputClosed = event as? ChannelEvent {
            // The socket's side ended: so does this one (a TLS socket waits for the answer to its close_notify).
            // Over TLS the end is orderly only with the socket's close_notify: NIOSSL reports a ragged end (the TCP
            // stream ended without one) as `uncleanShutdown` first.
            end(errno: switched && unclean ? raggedEnd : 0, note: unclean ? "input closed, unclean" : "input closed")
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError {
            end(errno: error.errnoCode, note: "error \(error)")
        } else if let error = error as? NIOSSLError, case .uncleanShutdown = error {
            // The TCP stream ended without close_notify: the end (input closed, or the channel gone) follows.
            unclean = true
            return
        } else {
            end(errno: -1, note: "error \(error)")
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Gone without an input-closed event: in plaintext a FIN; over TLS orderly only once both close_notify
        // alerts were exchanged (NIOSSL closes the channel before it reports the input closed when this side had
        // closed its output first).
        end(
            errno: switched && !shutdownCompleted ? raggedEnd : writeErrno ?? 0,
            note: "inactive, unclean \(unclean), shutdown completed \(shutdownCompleted)"
        )
        context.fireChannelInactive()
    }

    /// How a ragged TLS end is counted: the errno a refused write saw (the socket reset the connection, which may
    /// lose what it had written last), else ``StreamingPeer/State/raggedEnd``.
    private var raggedEnd: Int32 { writeErrno ?? StreamingPeer.State.raggedEnd }

    private func end(errno code: Int32, note: String) {
        guard !ended else { return }
        ended = true
        let total = received
        let note = "\(note), write errno \(writeErrno.map(String.init) ?? "none")"
        state.withLock {
            $0.endErrno = code
            $0.endedAt = .now
            $0.endNote = note
        }
        receiverEnded.set(total)
        if !scheduled { finishSending() }
    }
}
