import Dispatch
import NIOCore
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every datagram either face sends goes through here, never through NIO's write path. A datagram goes straight to
/// `sendto` from whatever thread sends it; when the kernel has no room (`EAGAIN`) it waits in the gate's own queue
/// (``UDPSendWaitQueue``), and a write source on the descriptor sends the waiting ones, in order, once the kernel can
/// take them. So:
/// - a waiting datagram can be withdrawn (a send timeout) and is then never sent: the kernel has not seen it;
/// - every refusal (`EMSGSIZE`, `EACCES`, `EPERM`, `ECONNREFUSED`, `ENETUNREACH`, …) fails that datagram alone: NIO's
///   own write path would close the channel on most of them.
///
/// The gate works on a duplicate of the channel's descriptor, so that a channel NIO closes (on its own, after a fatal
/// error) can never leave a descriptor number that another socket reuses under a send or a `setsockopt`
/// (``withDescriptor(_:)``); the duplicate is closed with the gate (once no write source still watches it). Every
/// decision is taken under one lock, so datagrams keep their order: once one waits, the others queue behind it.
final class UDPSendGate: Sendable {
    enum Outcome {
        /// The kernel took the datagram.
        case sent
        /// The kernel refused it with this errno; the socket stays open.
        case failed(Int32)
        /// It waits in the gate (the kernel had no room, or others wait before it); its promise completes when the
        /// kernel took or refused it, or the gate closed. The number withdraws it (``withdraw(_:)``).
        case queued(UInt64)
        /// The gate is closed.
        case closed
    }

    fileprivate struct State {
        var descriptor: Int32
        var waiting = UDPSendWaitQueue()
        var isClosed = false
        /// An error the socket reported (an ICMP "connection refused" on a connected socket) that the next send
        /// returns, as the kernel would.
        var pendingError: Int32?
        /// The write source watching the descriptor while datagrams wait.
        var source: (any DispatchSourceWrite)?
        /// Write sources made and not yet cancelled to the end: the duplicate stays open until none is left.
        var liveSources = 0
    }

    private let state: LockedBox<State>
    private static let sourceQueue = DispatchQueue(label: "tether.udp.send-gate")

    /// Whether datagrams may go straight to the kernel (true) or must all wait for the write source (false): only
    /// the benchmarks turn it off, to measure what the direct send is worth (`Benchmarks`,
    /// `--only side-by-side-udp-gate`). Set it before making sockets; it is read without a lock on every send.
    nonisolated(unsafe) static var directSendsEnabled = true

    init(descriptor: Int32) {
        // Close-on-exec, as the channel's own descriptor: a process started later must not keep the port bound.
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        state = LockedBox(State(descriptor: duplicate, isClosed: duplicate < 0))
    }

    deinit {
        close()
    }

    /// Sends `envelope` now if the kernel takes or refuses it at once; otherwise queues it with the promise
    /// `makePromise` returns (called only then). `whenTaken` runs under the gate's lock, in the same step as the
    /// `sendto` the kernel took (now or from the queue): what it notes is known to anyone who closes the gate.
    func send(
        _ envelope: AddressedEnvelope<ByteBuffer>,
        whenTaken: (@Sendable () -> Void)? = nil,
        queueWith makePromise: () -> EventLoopPromise<Void>
    ) -> Outcome {
        state.withLock { state in
            if state.isClosed { return .closed }
            if let pending = state.pendingError {
                state.pendingError = nil
                return .failed(pending)
            }
            if Self.directSendsEnabled, state.waiting.isEmpty,
                let outcome = Self.sendNow(envelope, on: state.descriptor)
            {
                if case .sent = outcome { whenTaken?() }
                return outcome
            }
            let token = state.waiting.append(envelope, promise: makePromise(), whenTaken: whenTaken)
            watch(&state)
            return .queued(token)
        }
    }

    /// Sends `envelope` now if the kernel takes or refuses it at once; nil (nothing sent, nothing queued) when
    /// datagrams wait, an error waits for the next send, the socket buffer is full, or the gate is closed.
    /// `whenTaken` runs under the gate's lock when the kernel took it (as in ``send(_:whenTaken:queueWith:)``).
    func sendIfIdle(_ envelope: AddressedEnvelope<ByteBuffer>, whenTaken: () -> Void = {}) -> Outcome? {
        state.withLock { state in
            guard !state.isClosed, Self.directSendsEnabled, state.pendingError == nil, state.waiting.isEmpty else {
                return nil
            }
            let outcome = Self.sendNow(envelope, on: state.descriptor)
            if case .sent = outcome { whenTaken() }
            return outcome
        }
    }

    /// Takes the waiting datagram `token` out of the queue: it will never be sent. Returns its promise (for the
    /// caller to fail once it has reported the datagram), or nil when the kernel took or refused it already, or the
    /// gate closed (its promise is then completed or about to be).
    func withdraw(_ token: UInt64) -> EventLoopPromise<Void>? {
        state.withLock { state in
            let promise = state.waiting.remove(token)
            if state.waiting.isEmpty { unwatch(&state) }
            return promise
        }
    }

    /// Runs `body` with the socket's descriptor (the gate's duplicate), under the gate's lock: it cannot be closed
    /// meanwhile. Nil when the gate is closed.
    func withDescriptor<T>(_ body: (Int32) throws -> T) rethrows -> T? {
        try state.withLock { state in
            guard !state.isClosed else { return nil }
            return try body(state.descriptor)
        }
    }

    /// Records an error for the next send.
    func setPendingError(_ code: Int32) {
        state.withLock { $0.pendingError = code }
    }

    /// Closes the duplicate descriptor (once no write source watches it); waiting datagrams fail with
    /// `ioOnClosedChannel`; later sends answer `.closed`.
    func close() {
        for promise in stop() { promise.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Closes the gate as ``close()`` does, but returns the promises of the datagrams that waited (never sent) for
    /// the caller to fail once it holds no lock: failing one on its loop runs its callbacks inline. Once this
    /// returns, no datagram leaves through the gate, and a `sendto` under way has finished.
    func stop() -> [EventLoopPromise<Void>] {
        state.withLock { state in
            guard !state.isClosed else { return [] }
            state.isClosed = true
            let dropped = state.waiting.removeAll()
            unwatch(&state)
            if state.liveSources == 0 { _ = UDPSystem.close(state.descriptor) }
            return dropped
        }
    }

    // MARK: the write source

    /// Under the lock: makes a write source for the waiting datagrams unless one watches already.
    private func watch(_ state: inout State) {
        guard state.source == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: state.descriptor, queue: Self.sourceQueue)
        let box = self.state
        source.setEventHandler { [weak self] in self?.drain() }
        source.setCancelHandler {
            box.withLock { state in
                state.liveSources -= 1
                if state.isClosed, state.liveSources == 0 { _ = UDPSystem.close(state.descriptor) }
            }
        }
        state.liveSources += 1
        state.source = source
        source.resume()
    }

    /// Under the lock: no datagram waits; the write source goes.
    private func unwatch(_ state: inout State) {
        state.source?.cancel()
        state.source = nil
    }

    /// On the write source's queue: sends the waiting datagrams, in order, until the kernel has no room; then
    /// completes their promises outside the lock.
    private func drain() {
        var done: [(EventLoopPromise<Void>, Int32?)] = []
        state.withLock { state in
            guard !state.isClosed else { return }
            while let head = state.waiting.first {
                let outcome: Outcome?
                if let pending = state.pendingError {
                    state.pendingError = nil
                    outcome = .failed(pending)
                } else {
                    outcome = Self.sendNow(head.envelope, on: state.descriptor)
                }
                guard let outcome else { break }
                state.waiting.removeFirst()
                if case .failed(let code) = outcome {
                    done.append((head.promise, code))
                } else {
                    head.whenTaken?()
                    done.append((head.promise, nil))
                }
            }
            if state.waiting.isEmpty { unwatch(&state) }
        }
        for (promise, code) in done {
            if let code { promise.fail(IOError(errnoCode: code, reason: "sendto")) } else { promise.succeed() }
        }
    }

    /// One `sendto`: `.sent` or `.failed(errno)`, or nil when the kernel has no room now (EAGAIN, EINTR).
    private static func sendNow(_ envelope: AddressedEnvelope<ByteBuffer>, on descriptor: Int32) -> Outcome? {
        let result = envelope.remoteAddress.withSockAddr { address, length in
            envelope.data.withUnsafeReadableBytes { bytes in
                sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), address, socklen_t(length))
            }
        }
        if result >= 0 { return .sent }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return nil }
        return .failed(code)
    }
}

// Sendable: the write source is made, cancelled and dropped under the gate's lock only; everything else in the state
// is Sendable.
extension UDPSendGate.State: @unchecked Sendable {}
