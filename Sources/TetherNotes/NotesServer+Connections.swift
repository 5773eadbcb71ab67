import Logging
import NIOCore
import TetherConcurrency
import TetherCore
public import TetherSockets
import TetherStore

import struct Foundation.UUID

extension NotesServer {
    /// What a connection is bound to once served: the notes, and the user (nil when anonymous).
    struct Binding {
        var address: String
        var space: NotesServedSpace?
        var user: String?
        var joinedRelay: NotesChangeRelay?
        /// Checks the login's credentials again until the connection ends.
        var credentialsCheck: Task<Void, Never>?
    }

    /// Serves one connection until it ends: admits it against the limits, authenticates it (with accounts), then
    /// carries out its requests on its user's notes.
    public func serve(_ connection: TCPConnection) async {
        let id = nextConnectionID()
        let address = connection.remoteAddress.ipAddress ?? "\(connection.remoteAddress)"
        // A reply with nothing queued ahead of it is written by the reader itself: no other task is woken for it.
        let outbox = NotesOutbox { [self] frame in await write(frame, to: connection) }
        async let writing: Void = write(outbox, to: connection)
        var binding = Binding(address: address)
        var session: NotesServerSession
        var refusal: NotesError?
        switch mode {
        case .anonymous(let space):
            session = NotesServerSession(maxPayloadLength: maxPayloadLength)
            binding.space = space
            if !Self.isLoopback(connection.localAddress) {
                refusal = NotesError(code: .notAuthenticated, message: "an anonymous server serves loopback only")
            }
        case .accounts:
            session = NotesServerSession(requiresAuthentication: true, maxPayloadLength: maxPayloadLength)
        }
        // On an anonymous server every client has the one loopback address: only the total is limited.
        var admission = limits
        if case .anonymous = mode { admission.connectionsPerAddress = limits.connections }
        let admitted = refusal == nil && counts.withLock { $0.admit(address, limits: admission) }
        if admitted { connectionWaiters.countChanged { counts.withLock { $0.total } } }
        if admitted {
            let watchdog = watchAuthentication(of: outbox, requiresIt: !session.isServing)
            await read(connection, session: &session, binding: &binding, id: id, outbox: outbox, watchdog: watchdog)
            watchdog?.cancel()
            peakOutboxBytes.withLock { $0 = max($0, outbox.peakBytes) }
            counts.withLock { $0.release(address, user: binding.user) }
            connectionWaiters.countChanged { counts.withLock { $0.total } }
        } else {
            let error = refusal ?? NotesError(code: .limitExceeded, message: "too many connections")
            logger.debug("notes connection from \(address) refused: \(error)")
            await outbox.reply(Self.frame(.failed(error)))
        }
        binding.credentialsCheck?.cancel()
        binding.space?.unsubscribe(id)
        binding.joinedRelay?.leave()
        outbox.finish()
        await writing
        try? await connection.close()
    }

    private func nextConnectionID() -> UInt64 {
        nextConnection.withLock {
            $0 += 1
            return $0
        }
    }

    /// A frame from the server with no request to answer (request id 0, addresses 0).
    static func frame(_ message: NotesMessage) -> STXFrame {
        let payload = (try? NotesWireFormat.encode(message, requestID: 0)) ?? ByteBuffer()
        return STXFrame(destination: 0, source: 0, payload: payload)
    }

    /// Ends a connection that has not authenticated within the deadline: a `.timedOut` error, then the close.
    private func watchAuthentication(of outbox: NotesOutbox, requiresIt: Bool) -> Task<Void, Never>? {
        guard requiresIt else { return nil }
        let deadline = limits.authenticationTimeout
        return Task {
            do { try await Task.sleep(for: deadline) } catch { return }
            outbox.send(
                Self.frame(.failed(NotesError(code: .timedOut, message: "no authentication within \(deadline)")))
            )
            outbox.finish()
        }
    }

    /// Writes the frames queued in `outbox` (those that found others ahead of them, and pushed changes) until it
    /// ends, then closes the connection.
    private func write(_ outbox: NotesOutbox, to connection: TCPConnection) async {
        while let frame = await outbox.next() {
            guard await write(frame, to: connection) else { break }
        }
        // The outbox ended (the reader is done, or a subscriber fell too far behind) or a write failed: a reader
        // waiting for room must not wait for a writer that is gone.
        outbox.finish()
        try? await connection.close()
    }

    /// Writes one frame, in one buffer of its size; false (logged) when the connection failed.
    private func write(_ frame: STXFrame, to connection: TCPConnection) async -> Bool {
        do {
            try await connection.write(try codec.wireBytes(of: frame), timeout: .seconds(30))
            return true
        } catch {
            logger.debug("notes connection: write failed: \(error)")
            return false
        }
    }

    private func read(
        _ connection: TCPConnection,
        session: inout NotesServerSession,
        binding: inout Binding,
        id: UInt64,
        outbox: NotesOutbox,
        watchdog: Task<Void, Never>?
    ) async {
        var frames = connection.frames(codec, timeout: limits.idleTimeout).makeAsyncIterator()
        while session.isOpen {
            let wasServing = session.isServing
            do {
                guard let frame = try await frames.next() else {
                    await execute(session.ended(), session: &session, binding: &binding, id: id, outbox: outbox)
                    return
                }
                await execute(session.received(frame), session: &session, binding: &binding, id: id, outbox: outbox)
            } catch let error as FramingError {
                await execute(
                    session.framingFailed(error),
                    session: &session,
                    binding: &binding,
                    id: id,
                    outbox: outbox
                )
                // A bad checksum: the frame's bytes are still buffered; drop them and read on.
                if session.isOpen, let bytes = error.bytes {
                    _ = try? await connection.read(toLength: bytes.readableBytes, timeout: .seconds(5))
                }
            } catch let error as GCDAsyncSocketError where error.code == .readTimeout {
                // A watcher may stay silent; anyone else must send a whole frame within the idle timeout.
                if session.isSubscribed { continue }
                let actions = session.timedOut("no whole frame within \(limits.idleTimeout)")
                await execute(actions, session: &session, binding: &binding, id: id, outbox: outbox)
            } catch {
                logger.debug("notes connection: \(error)")
                await execute(session.ended(), session: &session, binding: &binding, id: id, outbox: outbox)
            }
            if !wasServing && session.isServing { watchdog?.cancel() }
        }
    }
}
