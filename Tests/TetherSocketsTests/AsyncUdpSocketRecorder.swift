import Foundation
import NIOConcurrencyHelpers
import NIOCore
import TetherSockets

/// What an ``AsyncUdpSocket`` delegate saw, in order.
enum AsyncUdpEvent: Equatable, CustomStringConvertible {
    case sent(tag: Int)
    case notSent(tag: Int, domain: String, code: Int)
    case received(Data, tag: Int, accepted: Bool)
    case notReceived(tag: Int, code: Int)
    case closed

    var description: String {
        switch self {
        case .sent(let tag): "sent(\(tag))"
        case .notSent(let tag, let domain, let code): "notSent(\(tag), \(domain) \(code))"
        case .received(let data, let tag, let accepted):
            "received(\(String(decoding: data.prefix(20), as: UTF8.self)) [\(data.count)], tag \(tag), \(accepted))"
        case .notReceived(let tag, let code): "notReceived(\(tag), \(code))"
        case .closed: "closed"
        }
    }

    var receivedData: Data? {
        if case .received(let data, _, true) = self { return data }
        return nil
    }
}

/// An ``AsyncUdpSocketDelegate`` that records every callback with the run loop it ran on, answers `didReceive` with
/// `accepts`, and lets a test await a condition on the events (no sleeps).
final class AsyncUdpRecorder: AsyncUdpSocketDelegate {
    private let lock = NIOLock()
    private let log = EventLog<AsyncUdpEvent>()
    private var places: [ObjectIdentifier] = []
    private var senders: [(host: String, port: UInt16)] = []
    private var accepter: @Sendable (Data) -> Bool = { _ in true }
    private var hook: (@Sendable (AsyncUdpSocket, AsyncUdpEvent) -> Void)?

    var events: [AsyncUdpEvent] { log.events }
    var receivedData: [Data] { events.compactMap(\.receivedData) }
    /// The sender of each datagram offered, in order.
    var receivedFrom: [(host: String, port: UInt16)] { lock.withLock { senders } }

    /// Whether every callback so far ran on `runLoop`.
    func allRan(on runLoop: RunLoop) -> Bool {
        lock.withLock { places.allSatisfy { $0 == ObjectIdentifier(runLoop) } }
    }

    /// The run loop of each callback, in order.
    var runLoops: [ObjectIdentifier] { lock.withLock { places } }

    /// What `didReceive` answers (default: take every datagram).
    func accepts(_ decide: @escaping @Sendable (Data) -> Bool) {
        lock.withLock { accepter = decide }
    }

    /// Runs after each callback is recorded, inside the callback (on the run loop).
    func onEvent(_ body: @escaping @Sendable (AsyncUdpSocket, AsyncUdpEvent) -> Void) {
        lock.withLock { hook = body }
    }

    private func record(_ event: AsyncUdpEvent, socket: AsyncUdpSocket) {
        let after = lock.withLock { () -> ((AsyncUdpSocket, AsyncUdpEvent) -> Void)? in
            places.append(ObjectIdentifier(RunLoop.current))
            return hook
        }
        log.append(event) { after?(socket, event) }
    }

    /// Waits until `condition` holds; throws ``EventWaitTimedOut`` after `timeout`.
    @discardableResult
    func wait(
        timeout: Duration = .seconds(10),
        until condition: @escaping @Sendable ([AsyncUdpEvent]) -> Bool
    ) async throws -> [AsyncUdpEvent] {
        try await log.wait(timeout: timeout, until: condition)
    }

    /// Waits until `event` was seen.
    @discardableResult
    func wait(for event: AsyncUdpEvent) async throws -> [AsyncUdpEvent] {
        try await wait { $0.contains(event) }
    }

    // MARK: delegate

    func onUdpSocket(_ sock: AsyncUdpSocket, didSendDataWithTag tag: Int) {
        record(.sent(tag: tag), socket: sock)
    }

    func onUdpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        let nsError = error.map { $0 as NSError }
        record(.notSent(tag: tag, domain: nsError?.domain ?? "", code: nsError?.code ?? 0), socket: sock)
    }

    func onUdpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        withTag tag: Int,
        fromHost host: String,
        port: UInt16
    ) -> Bool {
        let accepted = lock.withLock {
            senders.append((host, port))
            return accepter(data)
        }
        record(.received(data, tag: tag, accepted: accepted), socket: sock)
        return accepted
    }

    func onUdpSocket(_ sock: AsyncUdpSocket, didNotReceiveDataWithTag tag: Int, dueToError error: (any Error)?) {
        record(.notReceived(tag: tag, code: (error.map { $0 as NSError })?.code ?? 0), socket: sock)
    }

    func onUdpSocketDidClose(_ sock: AsyncUdpSocket) {
        record(.closed, socket: sock)
    }
}

// Sendable: its state is behind `lock`; callbacks arrive on the socket's run loop.
extension AsyncUdpRecorder: @unchecked Sendable {}

/// A RunLoop-era socket made on `home`'s thread (so it belongs to that run loop), with `recorder` as its delegate.
func makeAsyncUdpSocket(on home: RunLoopThread, _ recorder: AsyncUdpRecorder?) async throws -> AsyncUdpSocket {
    try await home.sync { AsyncUdpSocket(delegate: recorder) }
}

/// An async-face socket on 127.0.0.1 that sends datagrams to a RunLoop-era socket's port.
struct AsyncUdpTestSender {
    let socket: UDPSocket

    var port: UInt16 { UInt16(socket.localPort) }

    static func make(host: String = "127.0.0.1") async throws -> AsyncUdpTestSender {
        AsyncUdpTestSender(socket: try await UDPSocket.bind(host: host, port: 0))
    }

    /// Sends each payload in order; each has reached the kernel of the receiver (loopback) when this returns.
    func send(_ payloads: [Data], to port: UInt16, host: String = "127.0.0.1") async throws {
        let address = try SocketAddress(ipAddress: host, port: Int(port))
        for payload in payloads { try await socket.send(ByteBuffer(bytes: payload), to: address) }
    }

    func send(_ words: String..., to port: UInt16) async throws {
        try await send(words.map { Data($0.utf8) }, to: port)
    }

    func close() async {
        try? await socket.close()
    }
}
