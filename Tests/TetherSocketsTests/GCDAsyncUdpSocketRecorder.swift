import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TetherSockets

/// What a UDP delegate saw, in order.
enum UdpEvent: Equatable, CustomStringConvertible {
    case connected(port: UInt16)
    case notConnected(code: Int?)
    case sent(tag: Int)
    case notSent(tag: Int, code: Int?, errno: POSIXErrorCode?)
    case received(Data, port: UInt16, context: String?)
    case closed(code: Int?)

    var description: String {
        switch self {
        case .connected(let port): "connected(\(port))"
        case .notConnected(let code): "notConnected(\(code.map(String.init) ?? "nil"))"
        case .sent(let tag): "sent(\(tag))"
        case .notSent(let tag, let code, let errno):
            "notSent(\(tag), \(code.map(String.init) ?? "nil"), \(errno.map { "\($0)" } ?? "-"))"
        case .received(let data, let port, let context):
            "received(\(data.count) bytes from \(port), context: \(context ?? "nil"))"
        case .closed(let code): "closed(\(code.map(String.init) ?? "nil"))"
        }
    }

    var receivedData: Data? {
        if case .received(let data, _, _) = self { return data }
        return nil
    }
}

/// A UDP delegate that records every callback, checks that each runs on its queue, and lets a test await a
/// condition on the events (no sleeps).
final class UdpRecorder: GCDAsyncUdpSocketDelegate {
    let queue: DispatchQueue
    private let log = EventLog<UdpEvent>()
    private let lock = NIOLock()
    private var errors: [(any Error)?] = []
    private var offQueue = 0
    var offQueueCallbacks: Int { lock.withLock { offQueue } }

    init(label: String = "udp") {
        queue = DispatchQueue(label: label)
    }

    var events: [UdpEvent] { log.events }
    var lastError: (any Error)? { lock.withLock { errors.last ?? nil } }
    var receivedData: [Data] { events.compactMap(\.receivedData) }

    private func record(_ event: UdpEvent, error: (any Error)? = nil) {
        let onQueue = DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self)
        lock.withLock {
            if !onQueue { offQueue += 1 }
            errors.append(error)
        }
        log.append(event)
    }

    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    /// Marks the queue so callbacks can check they run on it.
    func markQueue() {
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// Waits until `condition` holds; throws ``EventWaitTimedOut`` after `timeout`.
    @discardableResult
    func wait(
        timeout: Duration = .seconds(10),
        until condition: @escaping @Sendable ([UdpEvent]) -> Bool
    )
        async throws -> [UdpEvent]
    {
        try await log.wait(timeout: timeout, until: condition)
    }

    /// Waits until `count` datagrams were received.
    @discardableResult
    func waitForReceived(_ count: Int) async throws -> [Data] {
        try await wait { $0.compactMap(\.receivedData).count >= count }
        return receivedData
    }

    /// Waits until every tag in `tags` was reported sent or not sent.
    func waitForSendResults(_ tags: Set<Int>) async throws {
        try await wait { events in
            let done = Set(
                events.compactMap { event -> Int? in
                    switch event {
                    case .sent(let tag), .notSent(let tag, _, _): tag
                    default: nil
                    }
                }
            )
            return tags.isSubset(of: done)
        }
    }

    /// Makes a socket with this recorder as delegate.
    func makeSocket(eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) -> GCDAsyncUdpSocket {
        markQueue()
        return GCDAsyncUdpSocket(delegate: self, delegateQueue: queue, eventLoopGroup: eventLoopGroup)
    }

    // MARK: delegate

    func udpSocket(_ sock: GCDAsyncUdpSocket, didConnectToAddress address: Data) {
        record(.connected(port: GCDAsyncUdpSocket.port(fromAddress: address)))
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotConnect error: (any Error)?) {
        record(.notConnected(code: (error as? GCDAsyncUdpSocketError)?.code.rawValue), error: error)
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didSendDataWithTag tag: Int) {
        record(.sent(tag: tag))
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        let udpError = error as? GCDAsyncUdpSocketError
        record(.notSent(tag: tag, code: udpError?.code.rawValue, errno: udpError?.posixErrorCode), error: error)
    }

    func udpSocket(
        _ sock: GCDAsyncUdpSocket,
        didReceive data: Data,
        fromAddress address: Data,
        withFilterContext filterContext: Any?
    ) {
        record(.received(data, port: GCDAsyncUdpSocket.port(fromAddress: address), context: filterContext as? String))
    }

    func udpSocketDidClose(_ sock: GCDAsyncUdpSocket, withError error: (any Error)?) {
        record(.closed(code: (error as? GCDAsyncUdpSocketError)?.code.rawValue), error: error)
    }
}

/// Bytes 0, 1, 2, … of the given length, so truncation or reordering shows.
func udpPattern(_ count: Int, seed: UInt8 = 0) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) })
}

// Its state is behind `lock`; callbacks arrive on `queue`.
extension UdpRecorder: @unchecked Sendable {}
