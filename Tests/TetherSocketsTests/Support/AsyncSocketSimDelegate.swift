import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// The randomized test's delegate: records every callback with what the checker needs, checks that each runs on
/// the socket's run loop thread and never while another runs on another thread, and runs the schedule's steps
/// placed inside a read's callback.
final class AsyncSocketSimDelegate: AsyncSocketDelegate, @unchecked Sendable {
    enum Event: CustomStringConvertible {
        case connected
        case read(tag: Int, data: Data, buffer: Data?)
        case partialRead(tag: Int, length: UInt)
        case wrote(tag: Int)
        case partialWrite(tag: Int)
        case timeoutAsked(tag: Int)
        case willDisconnect(NSError?, unread: Data?)
        case disconnected

        var description: String {
            switch self {
            case .connected: "connected"
            case .read(let tag, let data, _): "read #\(tag) \(data.count) bytes"
            case .partialRead(let tag, let length): "partialRead #\(tag) \(length)"
            case .wrote(let tag): "wrote #\(tag)"
            case .partialWrite(let tag): "partialWrite #\(tag)"
            case .timeoutAsked(let tag): "timeoutAsked #\(tag)"
            case .willDisconnect(let error, let unread):
                "willDisconnect(\(error.map { "\($0.domain) \($0.code)" } ?? "nil"), unread \(unread?.count ?? -1))"
            case .disconnected: "disconnected"
            }
        }
    }

    // Sendable: every mutable member is behind `lock`; `runLoop` is set before the socket starts.
    private let lock = NIOLock()
    private var recorded: [Event] = []
    private var problems: [String] = []
    private var activeThread: Thread?
    private var depth = 0
    private var buffers: [Int: NSMutableData] = [:]
    private var delivered: Set<Int> = []
    private var hasDisconnected = false
    private var consumedBytes = 0
    private var pendingStep: (tag: Int, body: @Sendable () -> Void)?
    /// Signalled on every read, on the end of the connect, and on onSocketDidDisconnect.
    let progress = DispatchSemaphore(value: 0)
    var runLoop: RunLoop?

    var events: [Event] { lock.withLock { recorded } }
    var violations: [String] { lock.withLock { problems } }
    var disconnected: Bool { lock.withLock { hasDisconnected } }
    /// The stream's bytes the completed reads took.
    var consumed: Int { lock.withLock { consumedBytes } }
    var connected: Bool { lock.withLock { recorded.contains { if case .connected = $0 { true } else { false } } } }

    /// The buffer a read writes into (before the read is issued).
    func setBuffer(_ buffer: NSMutableData, tag: Int) {
        lock.withLock { buffers[tag] = buffer }
    }

    /// Runs `body` inside the `didRead` of read `tag`; false when that read already completed or the socket closed.
    func runInside(readTag tag: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
        lock.withLock {
            guard !delivered.contains(tag), !hasDisconnected else { return false }
            pendingStep = (tag, body)
            return true
        }
    }

    /// Takes back a step that did not run; nil when it ran (or is running).
    func takeBackStep() -> (@Sendable () -> Void)? {
        lock.withLock {
            defer { pendingStep = nil }
            return pendingStep?.body
        }
    }

    private func record(_ event: Event, _ body: () -> Void = {}) {
        lock.withLock {
            if let runLoop, RunLoop.current !== runLoop { problems.append("\(event) off the socket's run loop") }
            if let activeThread, activeThread !== Thread.current {
                problems.append("\(event) while a callback ran on another thread")
            }
            activeThread = Thread.current
            depth += 1
            if hasDisconnected { problems.append("\(event) after onSocketDidDisconnect") }
            recorded.append(event)
        }
        body()
        lock.withLock {
            depth -= 1
            if depth == 0 { activeThread = nil }
        }
    }

    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        record(.connected)
        progress.signal()
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        let (buffer, step): (Data?, (() -> Void)?) = lock.withLock {
            delivered.insert(tag)
            consumedBytes += data.count
            var step: (() -> Void)?
            if pendingStep?.tag == tag {
                step = pendingStep?.body
                pendingStep = nil
            }
            return (buffers[tag].map { $0 as Data }, step)
        }
        record(.read(tag: tag, data: data, buffer: buffer)) { step?() }
        progress.signal()
    }

    func onSocket(_ sock: AsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {
        record(.partialRead(tag: tag, length: partialLength))
    }

    func onSocket(_ sock: AsyncSocket, didWriteDataWithTag tag: Int) {
        record(.wrote(tag: tag))
    }

    func onSocket(_ sock: AsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {
        record(.partialWrite(tag: tag))
    }

    func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone: UInt
    )
        -> TimeInterval
    {
        record(.timeoutAsked(tag: tag))
        return 0
    }

    func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutWriteWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone: UInt
    )
        -> TimeInterval
    {
        record(.timeoutAsked(tag: tag))
        return 0
    }

    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        record(.willDisconnect(err.map { $0 as NSError }, unread: sock.unreadData()))
    }

    func onSocketDidDisconnect(_ sock: AsyncSocket) {
        record(.disconnected)
        lock.withLock { hasDisconnected = true }
        progress.signal()
    }
}
