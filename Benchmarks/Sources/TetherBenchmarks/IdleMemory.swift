import Dispatch
import Foundation
import NIOCore
import NIOPosix
import TetherSockets

/// Resident memory per idle connection: N connections held open to a peer that never writes.
enum IdleMemory {
    static func run(connections: Int) async throws {
        print("\n## Idle connections: resident memory per connection, \(connections) open")
        let peer = try PeerProcess(mode: .hold)
        defer { peer.stop() }
        var perConnection: [String: Double] = [:]
        for (name, open) in variants(port: peer.port) {
            let before = residentBytes()
            let close = try await open(connections)
            let after = residentBytes()
            perConnection[name] = Double(after - before) / Double(connections)
            print("  \(name): \(String(format: "%.0f", perConnection[name]!)) B/connection")
            try await close()
        }
        print("| variant | bytes per idle connection | vs raw NIO |")
        print("|---|---|---|")
        let raw = perConnection["NIO channels"]!
        for name in ["NIO channels", "Tether async face", "Tether delegate face"] {
            let value = perConnection[name]!
            print("| \(name) | \(String(format: "%.0f", value)) | \(String(format: "%.2f×", value / raw)) |")
        }
    }

    typealias Opener = (Int) async throws -> () async throws -> Void

    static func variants(port: Int) -> [(String, Opener)] {
        [
            (
                "NIO channels",
                { count in
                    var channels: [any Channel] = []
                    for _ in 0..<count {
                        channels.append(
                            try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                                .connect(host: "127.0.0.1", port: port).get()
                        )
                    }
                    return {
                        for channel in channels { try? await channel.close() }
                    }
                }
            ),
            (
                "Tether async face",
                { count in
                    var connections: [TCPConnection] = []
                    for _ in 0..<count {
                        connections.append(try await TCPConnection.connect(host: "127.0.0.1", port: port))
                    }
                    return {
                        for connection in connections { try? await connection.close() }
                    }
                }
            ),
            (
                "Tether delegate face",
                { count in
                    let holder = IdleHolder()
                    var sockets: [GCDAsyncSocket] = []
                    for _ in 0..<count {
                        let socket = GCDAsyncSocket(delegate: holder, delegateQueue: holder.queue)
                        try socket.connect(toHost: "127.0.0.1", onPort: UInt16(port), withTimeout: 30)
                        sockets.append(socket)
                    }
                    try await holder.waitForConnections(count)
                    return {
                        for socket in sockets { socket.disconnect() }
                    }
                }
            ),
        ]
    }
}

final class IdleHolder: GCDAsyncSocketDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "benchmark.idle")
    private var connected = 0
    private var waiter: (Int, CheckedContinuation<Void, Never>)?

    func socket(_ sock: GCDAsyncSocket, didConnectToHost host: String, port: UInt16) {
        connected += 1
        if let (target, continuation) = waiter, connected >= target {
            waiter = nil
            continuation.resume()
        }
    }

    func waitForConnections(_ target: Int) async throws {
        await withCheckedContinuation { continuation in
            queue.async {
                if self.connected >= target {
                    continuation.resume()
                } else {
                    self.waiter = (target, continuation)
                }
            }
        }
    }
}
