import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TetherSockets

/// What a delegate saw, in order.
enum SocketEvent: Equatable, CustomStringConvertible {
    case accepted
    case connected(host: String, port: UInt16)
    case connectedURL(String)
    case read(Data, tag: Int)
    case partialRead(UInt, tag: Int)
    case wrote(tag: Int)
    case partialWrite(UInt, tag: Int)
    case readTimeoutAsked(tag: Int, elapsed: TimeInterval, bytesDone: UInt)
    case writeTimeoutAsked(tag: Int, elapsed: TimeInterval, bytesDone: UInt)
    case readStreamClosed
    case disconnected(code: Int?)
    case secured
    case trustAsked(peerName: String?, certificates: Int)

    var description: String {
        switch self {
        case .accepted: "accepted"
        case .connected(let host, let port): "connected(\(host), \(port))"
        case .connectedURL(let path): "connectedURL(\(path))"
        case .read(let data, let tag): "read(\(data.count) bytes, tag: \(tag))"
        case .partialRead(let length, let tag): "partialRead(\(length), tag: \(tag))"
        case .wrote(let tag): "wrote(tag: \(tag))"
        case .partialWrite(let length, let tag): "partialWrite(\(length), tag: \(tag))"
        case .readTimeoutAsked(let tag, let elapsed, let done): "readTimeoutAsked(\(tag), \(elapsed), \(done))"
        case .writeTimeoutAsked(let tag, let elapsed, let done): "writeTimeoutAsked(\(tag), \(elapsed), \(done))"
        case .readStreamClosed: "readStreamClosed"
        case .disconnected(let code): "disconnected(\(code.map(String.init) ?? "nil"))"
        case .secured: "secured"
        case .trustAsked(let name, let count): "trustAsked(\(name ?? "nil"), \(count))"
        }
    }

    var isDisconnect: Bool {
        if case .disconnected = self { return true }
        return false
    }
}

/// A delegate that records every callback, checks that each runs on its queue and never two at once, and lets a
/// test await a condition on the events (no sleeps).
final class SocketRecorder: GCDAsyncSocketDelegate, @unchecked Sendable {
    let queue: DispatchQueue
    private let log = EventLog<SocketEvent>()
    private let lock = NIOLock()
    private var errors: [(any Error)?] = []
    private var accepted: [GCDAsyncSocket] = []
    private var inCallback = false
    private(set) var violations: [String] = []
    /// Answers to `shouldTimeout…`, in order; 0 once they run out.
    var timeoutExtensions: [TimeInterval] = []
    /// Reactions run inside the callbacks (on the delegate's queue).
    var onRead: ((GCDAsyncSocket, Data, Int) -> Void)?
    var onAccept: ((GCDAsyncSocket, GCDAsyncSocket) -> Void)?
    var onConnect: ((GCDAsyncSocket) -> Void)?
    var checksQueue = true
    /// Manual trust: the answer, given from another thread after `trustAnswerDelay`; nil never answers.
    var trustAnswer: Bool? = true
    var trustAnswerDelay: TimeInterval = 0
    /// Called twice more after the first answer, with the opposite answer (later calls must be ignored).
    var answersTrustRepeatedly = false

    init(label: String = "recorder") {
        queue = DispatchQueue(label: label)
    }

    var events: [SocketEvent] { log.events }
    var acceptedSockets: [GCDAsyncSocket] { lock.withLock { accepted } }
    var disconnectErrors: [(any Error)?] { lock.withLock { errors } }
    var lastError: GCDAsyncSocketError? { lock.withLock { errors.last.flatMap { $0 as? GCDAsyncSocketError } } }

    private func record(_ event: SocketEvent, error: (any Error)?? = nil, body: () -> Void = {}) {
        if checksQueue { dispatchPrecondition(condition: .onQueue(queue)) }
        let reentered = lock.withLock { () -> Bool in
            let was = inCallback
            inCallback = true
            return was
        }
        if reentered { lock.withLock { violations.append("concurrent callbacks") } }
        body()
        // The error is in before a waiter that the event satisfies resumes (`waitForDisconnect` reads it then).
        log.append(event) {
            lock.withLock {
                if let error { errors.append(error) }
                if !reentered { inCallback = false }
            }
        }
    }

    /// Waits until `condition` holds for the events; throws ``EventWaitTimedOut`` after `timeout`, with each
    /// disconnect's error in full (code, domain, message, underlying error).
    @discardableResult
    func wait(
        timeout: Duration = .seconds(10),
        until condition: @escaping @Sendable ([SocketEvent]) -> Bool
    )
        async throws -> [SocketEvent]
    {
        do {
            return try await log.wait(timeout: timeout, until: condition)
        } catch var timedOut as EventWaitTimedOut<SocketEvent> {
            timedOut.details = disconnectErrors.map { "disconnected with \($0.map { "\($0)" } ?? "no error")" }
            throw timedOut
        }
    }

    func waitForDisconnect(timeout: Duration = .seconds(10)) async throws -> GCDAsyncSocketError? {
        try await wait(timeout: timeout) { $0.contains { $0.isDisconnect } }
        return lastError
    }

    func reads() -> [(Data, Int)] {
        events.compactMap { if case .read(let data, let tag) = $0 { return (data, tag) } else { return nil } }
    }

    // MARK: delegate

    func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
        record(.accepted) {
            lock.withLock { accepted.append(newSocket) }
            onAccept?(sock, newSocket)
        }
    }

    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        record(.connected(host: host, port: port)) { onConnect?(sock) }
    }

    func socket(_ sock: GCDAsyncSocket, didConnectTo url: URL) {
        record(.connectedURL(url.path)) { onConnect?(sock) }
    }

    func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
        record(.read(data, tag: tag)) { onRead?(sock, data, tag) }
    }

    func socket(_ sock: GCDAsyncSocket, didReadPartialDataOfLength partialLength: UInt, tag: Int) {
        record(.partialRead(partialLength, tag: tag))
    }

    func socket(_ sock: GCDAsyncSocket, didWriteDataWithTag tag: Int) {
        record(.wrote(tag: tag))
    }

    func socket(_ sock: GCDAsyncSocket, didWritePartialDataOfLength partialLength: UInt, tag: Int) {
        record(.partialWrite(partialLength, tag: tag))
    }

    private func nextExtension() -> TimeInterval {
        lock.withLock { timeoutExtensions.isEmpty ? 0 : timeoutExtensions.removeFirst() }
    }

    func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeoutReadWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    )
        -> TimeInterval
    {
        record(.readTimeoutAsked(tag: tag, elapsed: elapsed, bytesDone: length))
        return nextExtension()
    }

    func socket(
        _ sock: GCDAsyncSocket,
        shouldTimeoutWriteWithTag tag: Int,
        elapsed: TimeInterval,
        bytesDone length: UInt
    )
        -> TimeInterval
    {
        record(.writeTimeoutAsked(tag: tag, elapsed: elapsed, bytesDone: length))
        return nextExtension()
    }

    func socketDidCloseReadStream(_ sock: GCDAsyncSocket) {
        record(.readStreamClosed)
    }

    func socketDidSecure(_ sock: GCDAsyncSocket) {
        record(.secured)
    }

    func socket(
        _ sock: GCDAsyncSocket,
        didReceive trust: TLSPeerTrust,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) {
        record(.trustAsked(peerName: trust.peerName, certificates: trust.peerCertificates.count))
        guard let answer = trustAnswer else { return }
        let delay = trustAnswerDelay
        let repeated = answersTrustRepeatedly
        Thread.detachNewThread {
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            completionHandler(answer)
            if repeated {
                completionHandler(!answer)
                completionHandler(!answer)
            }
        }
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        record(
            .disconnected(code: (err as? GCDAsyncSocketError)?.code.rawValue ?? (err == nil ? nil : -1)),
            error: .some(err)
        )
    }
}

extension Array where Element == SocketEvent {
    var readData: Data {
        reduce(into: Data()) { result, event in
            if case .read(let data, _) = event { result.append(data) }
        }
    }

    func count(where predicate: (SocketEvent) -> Bool) -> Int {
        filter(predicate).count
    }

    var disconnectCount: Int { filter(\.isDisconnect).count }
}
