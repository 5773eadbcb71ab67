import Foundation
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
final class UDPCollectingPeer: Sendable {
    let socket: UDPSocket
    private let log = EventLog<Datagram>()
    private let pump: Task<Void, Never>

    var port: Int { socket.localPort }
    var datagrams: [Datagram] { log.events }
    var payloads: [Data] { datagrams.map { Data($0.data.readableBytesView) } }

    init(host: String) async throws {
        let socket = try await UDPSocket.bind(host: host, port: 0)
        let log = self.log
        self.socket = socket
        pump = Task {
            do {
                for try await datagram in socket.datagrams { log.append(datagram) }
            } catch {}
        }
    }

    /// Waits until `count` datagrams arrived; throws ``EventWaitTimedOut`` after `timeout`.
    @discardableResult
    func wait(for count: Int, timeout: Duration = .seconds(10)) async throws -> [Datagram] {
        try await log.wait(timeout: timeout) { $0.count >= count }
    }

    func stop() async {
        try? await socket.close()
        await pump.value
    }
}
