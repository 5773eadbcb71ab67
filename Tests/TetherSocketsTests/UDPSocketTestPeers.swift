import Foundation
import NIOConcurrencyHelpers
import NIOCore
import TetherSockets

/// An async-face socket that answers every datagram with the same bytes until stopped.
struct UDPEchoPeer {
    let socket: UDPSocket
    let task: Task<Void, any Error>

    var port: UInt16 { UInt16(socket.localPort) }

    static func start(host: String) async throws -> UDPEchoPeer {
        let socket = try await UDPSocket.bind(host: host, port: 0)
        let task = Task {
            for try await datagram in socket.datagrams {
                try await socket.send(datagram.data, to: datagram.remoteAddress)
            }
        }
        return UDPEchoPeer(socket: socket, task: task)
    }

    func stop() async {
        try? await socket.close()
        _ = try? await task.value
    }
}

/// An async-face socket that records the datagrams it receives; tests await a count (bounded).
final class UDPCollectingPeer {
    let socket: UDPSocket
    private let lock = NIOLock()
    private var received: [Datagram] = []
    private var waiters: [(count: Int, id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextID = 0
    private var pump: Task<Void, Never>?

    var port: Int { socket.localPort }
    var datagrams: [Datagram] { lock.withLock { received } }
    var payloads: [Data] { datagrams.map { Data($0.data.readableBytesView) } }

    init(host: String) async throws {
        socket = try await UDPSocket.bind(host: host, port: 0)
        let socket = self.socket
        pump = Task { [self] in
            do {
                for try await datagram in socket.datagrams { add(datagram) }
            } catch {}
        }
    }

    private func add(_ datagram: Datagram) {
        let ready: [CheckedContinuation<Void, any Error>] = lock.withLock {
            received.append(datagram)
            let due = waiters.filter { $0.count <= received.count }.map(\.continuation)
            waiters.removeAll { $0.count <= received.count }
            return due
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until `count` datagrams arrived; throws after `timeout`.
    @discardableResult
    func wait(for count: Int, timeout: Duration = .seconds(10)) async throws -> [Datagram] {
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let stale = lock.withLock { () -> [CheckedContinuation<Void, any Error>] in
                let mine = waiters.filter { $0.id == id }.map(\.continuation)
                waiters.removeAll { $0.id == id }
                return mine
            }
            for continuation in stale { continuation.resume(throwing: UdpWaitTimedOut(events: [])) }
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let satisfied = lock.withLock { () -> Bool in
                if received.count >= count { return true }
                waiters.append((count, id, continuation))
                return false
            }
            if satisfied { continuation.resume() }
        }
        return datagrams
    }

    func stop() async {
        try? await socket.close()
        await pump?.value
    }
}

// Its state is behind `lock`.
extension UDPCollectingPeer: @unchecked Sendable {}
