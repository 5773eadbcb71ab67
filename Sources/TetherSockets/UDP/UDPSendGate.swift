import NIOCore
import TetherConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Lets a datagram go straight to `sendto` from whatever thread sends it, without a hop to the event loop, while
/// nothing waits in NIO's write buffer. It sends on a duplicate of the channel's descriptor, so that a channel NIO
/// closes (on its own, after a fatal error) can never leave a descriptor number that another socket reuses under a
/// send; the duplicate is closed with the gate. Every direct send and every hand-over to NIO is decided under one
/// lock, so datagrams keep their order: once one waits in NIO (`EAGAIN`), the others follow it there until it is
/// written.
final class UDPSendGate: Sendable {
    enum Outcome {
        /// The kernel took the datagram.
        case sent
        /// The kernel refused it with this errno; the socket stays open.
        case failed(Int32)
        /// It must go through NIO (after `EAGAIN`, or behind datagrams already there); the gate counts it as
        /// waiting until `queuedDatagramDone()`.
        case queue
        /// The gate is closed.
        case closed
    }

    private struct State {
        var descriptor: Int32
        var waitingInNIO = 0
        var isClosed = false
        /// An error the socket reported (an ICMP "connection refused" on a connected socket) that the next send
        /// returns, as the kernel would.
        var pendingError: Int32?
    }

    private let state: LockedBox<State>

    /// Whether datagrams may go straight to the kernel (true) or must all go through NIO (false): only the
    /// benchmarks turn it off, to measure what the gate is worth (`Benchmarks`, `--only side-by-side-udp-gate`).
    /// Set it before making sockets; it is read without a lock on every send.
    nonisolated(unsafe) static var directSendsEnabled = true

    init(descriptor: Int32) {
        // Close-on-exec, as the channel's own descriptor: a process started later must not keep the port bound.
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        state = LockedBox(State(descriptor: duplicate, isClosed: duplicate < 0))
    }

    deinit {
        close()
    }

    /// Sends `envelope` now if it may go directly; otherwise counts it as waiting in NIO (`.queue`).
    func send(_ envelope: AddressedEnvelope<ByteBuffer>) -> Outcome {
        state.withLock { state in
            if state.isClosed { return .closed }
            if let pending = state.pendingError {
                state.pendingError = nil
                return .failed(pending)
            }
            if Self.directSendsEnabled, state.waitingInNIO == 0,
                let outcome = Self.sendNow(envelope, on: state.descriptor)
            {
                return outcome
            }
            state.waitingInNIO += 1
            return .queue
        }
    }

    /// Sends `envelope` now if the kernel takes or refuses it at once; `.queue` (nothing counted, nothing sent) when
    /// datagrams wait in NIO, an error waits for the next send, or the socket buffer is full.
    func sendIfIdle(_ envelope: AddressedEnvelope<ByteBuffer>) -> Outcome {
        state.withLock { state in
            if state.isClosed { return .closed }
            guard Self.directSendsEnabled, state.pendingError == nil, state.waitingInNIO == 0 else { return .queue }
            return Self.sendNow(envelope, on: state.descriptor) ?? .queue
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

    /// A datagram handed to NIO after `.queue` was written or failed.
    func queuedDatagramDone() {
        state.withLock { $0.waitingInNIO -= 1 }
    }

    /// Records an error for the next send.
    func setPendingError(_ code: Int32) {
        state.withLock { $0.pendingError = code }
    }

    /// Closes the duplicate descriptor; later sends answer `.closed`.
    func close() {
        state.withLock { state in
            guard !state.isClosed else { return }
            state.isClosed = true
            _ = UDPSystem.close(state.descriptor)
        }
    }
}
