import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// What a RunLoop-era delegate saw, in order.
enum RunLoopEvent: Equatable, CustomStringConvertible {
    case willConnect
    case accepted
    case wantsRunLoop
    case connected(host: String, port: UInt16)
    case read(Data, tag: Int)
    case partialRead(UInt, tag: Int)
    case wrote(tag: Int)
    case partialWrite(UInt, tag: Int)
    case readTimeoutAsked(tag: Int, elapsed: TimeInterval, bytesDone: UInt)
    case writeTimeoutAsked(tag: Int, elapsed: TimeInterval, bytesDone: UInt)
    /// `willDisconnectWithError`: the error's NSError domain and code, nil for a clean close.
    case willDisconnect(domain: String?, code: Int?)
    case disconnected
    case secured

    var description: String {
        switch self {
        case .willConnect: "willConnect"
        case .accepted: "accepted"
        case .wantsRunLoop: "wantsRunLoop"
        case .connected(let host, let port): "connected(\(host), \(port))"
        case .read(let data, let tag): "read(\(data.count) bytes, tag: \(tag))"
        case .partialRead(let length, let tag): "partialRead(\(length), tag: \(tag))"
        case .wrote(let tag): "wrote(tag: \(tag))"
        case .partialWrite(let length, let tag): "partialWrite(\(length), tag: \(tag))"
        case .readTimeoutAsked(let tag, let elapsed, let done): "readTimeoutAsked(\(tag), \(elapsed), \(done))"
        case .writeTimeoutAsked(let tag, let elapsed, let done): "writeTimeoutAsked(\(tag), \(elapsed), \(done))"
        case .willDisconnect(let domain, let code):
            "willDisconnect(\(domain ?? "nil"), \(code.map(String.init) ?? "nil"))"
        case .disconnected: "disconnected"
        case .secured: "secured"
        }
    }
}

/// A RunLoop-era delegate that records every callback, checks that each runs on the expected run loop's thread
/// (`willConnect` excepted: it runs where `connect` is called), and lets a test await a condition on the events.
final class RunLoopSocketRecorder: AsyncSocketDelegate, @unchecked Sendable {
    // Sendable: every mutable member is behind `lock`; the hooks are set before the socket starts.
    private let lock = NIOLock()
    private let log = EventLog<RunLoopEvent>()
    private(set) var violations: [String] = []
    private var _errors: [(any Error)?] = []
    private var _accepted: [AsyncSocket] = []
    /// The run loop callbacks must run on; nil: not checked.
    var expectedRunLoop: RunLoop?
    var willConnectAnswer = true
    var runLoopForNewSockets: RunLoop?
    var timeoutExtensions: [TimeInterval] = []
    /// `unreadData()` as seen inside each `willDisconnectWithError`.
    private(set) var unreadInWillDisconnect: [Data?] = []
    var onConnect: ((AsyncSocket) -> Void)?
    var onRead: ((AsyncSocket, Data, Int) -> Void)?
    var onWillDisconnect: ((AsyncSocket) -> Void)?

    var events: [RunLoopEvent] { log.events }
    var errors: [(any Error)?] { lock.withLock { _errors } }
    var acceptedSockets: [AsyncSocket] { lock.withLock { _accepted } }
    var unreadSeen: [Data?] { lock.withLock { unreadInWillDisconnect } }

    private func record(_ event: RunLoopEvent, checksThread: Bool = true) {
        if checksThread, let expectedRunLoop, RunLoop.current !== expectedRunLoop {
            lock.withLock { violations.append("\(event) off its run loop") }
        }
        log.append(event)
    }

    /// Waits until `condition` holds for the events; throws after `timeout`.
    @discardableResult
    func wait(
        timeout: Duration = .seconds(10),
        until condition: @escaping @Sendable ([RunLoopEvent]) -> Bool
    )
        async throws -> [RunLoopEvent]
    {
        try await log.wait(timeout: timeout, until: condition)
    }

    /// Waits for `onSocketDidDisconnect`.
    @discardableResult
    func waitForDisconnect(timeout: Duration = .seconds(10)) async throws -> [RunLoopEvent] {
        try await wait(timeout: timeout) { $0.contains(.disconnected) }
    }

    // MARK: delegate

    func onSocketWillConnect(_ sock: AsyncSocket) -> Bool {
        record(.willConnect, checksThread: false)
        return willConnectAnswer
    }

    func onSocket(_ sock: AsyncSocket, didAcceptNewSocket newSocket: AsyncSocket) {
        lock.withLock { _accepted.append(newSocket) }
        record(.accepted)
    }

    func onSocket(_ sock: AsyncSocket, wantsRunLoopForNewSocket newSocket: AsyncSocket) -> RunLoop? {
        record(.wantsRunLoop)
        return runLoopForNewSockets
    }

    func onSocket(_ sock: AsyncSocket, didConnectToHost host: String, port: UInt16) {
        // The hook first: a test that waits for the event may then read what the hook did.
        onConnect?(sock)
        record(.connected(host: host, port: port), checksThread: runLoopForNewSockets == nil)
    }

    func onSocket(_ sock: AsyncSocket, didRead data: Data, withTag tag: Int) {
        onRead?(sock, data, tag)
        record(.read(data, tag: tag))
    }

    func onSocket(_ sock: AsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {
        record(.partialRead(partialLength, tag: tag))
    }

    func onSocket(_ sock: AsyncSocket, didWriteDataWithTag tag: Int) {
        record(.wrote(tag: tag))
    }

    func onSocket(_ sock: AsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {
        record(.partialWrite(partialLength, tag: tag))
    }

    private func nextExtension() -> TimeInterval {
        lock.withLock { timeoutExtensions.isEmpty ? 0 : timeoutExtensions.removeFirst() }
    }

    func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    )
        -> TimeInterval
    {
        record(.readTimeoutAsked(tag: tag, elapsed: elapsed, bytesDone: length))
        return nextExtension()
    }

    func onSocket(
        _ sock: AsyncSocket,
        shouldTimeoutWriteWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    ) -> TimeInterval {
        record(.writeTimeoutAsked(tag: tag, elapsed: elapsed, bytesDone: length))
        return nextExtension()
    }

    func onSocket(_ sock: AsyncSocket, willDisconnectWithError err: (any Error)?) {
        let unread = sock.unreadData()
        lock.withLock {
            unreadInWillDisconnect.append(unread)
            _errors.append(err)
        }
        onWillDisconnect?(sock)
        let ns = err.map { $0 as NSError }
        record(.willDisconnect(domain: ns?.domain, code: ns?.code))
    }

    func onSocketDidDisconnect(_ sock: AsyncSocket) {
        record(.disconnected, checksThread: false)
    }

    func onSocketDidSecure(_ sock: AsyncSocket) {
        record(.secured)
    }
}
