import NIOCore
import TetherCore
import TetherSockets

/// Tether's async face doing each case's work: `TCPConnection`, `UDPSocket`, `frames(_:)`.
enum AsyncFaceWorkloads {
    static let message = EngineWorkloads.message

    /// A connection opened, 64 bytes each way, closed (both ends).
    static func connection(_ peers: PeerServers) -> Workload {
        Workload {
            WorkloadSession {
                let target = peers.tally.closed + 1
                let connection = try await TCPConnection.connect(host: "127.0.0.1", port: peers.echoPort)
                try await connection.write(message)
                _ = try await connection.read(toLength: message.readableBytes)
                try await connection.close()
                await peers.tally.waitUntilClosed(target)
            }
        }
    }

    /// One round trip of 64 bytes on a warm connection.
    static func pingPong(_ peers: PeerServers) -> Workload {
        Workload {
            let connection = try await TCPConnection.connect(host: "127.0.0.1", port: peers.echoPort)
            return WorkloadSession(
                operation: {
                    try await connection.write(message)
                    _ = try await connection.read(toLength: message.readableBytes)
                },
                end: { try await connection.close() }
            )
        }
    }

    /// One datagram of 64 bytes sent and its echo received.
    static func datagram(_ peers: PeerServers) -> Workload {
        Workload {
            let socket = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
            let peer = try SocketAddress(ipAddress: "127.0.0.1", port: peers.udpPort)
            let datagrams = IteratorBox(socket.datagrams.makeAsyncIterator())
            return WorkloadSession(
                operation: {
                    try await socket.send(message, to: peer)
                    guard try await datagrams.next() != nil else { throw HarnessError("the datagrams ended") }
                },
                end: { try await socket.close() }
            )
        }
    }

    /// `batch` STX frames through `frames(_:)`: one byte asks the peer for `batch` frames.
    static func frames(_ peers: PeerServers, batch: Int) -> Workload {
        Workload {
            let connection = try await TCPConnection.connect(host: "127.0.0.1", port: peers.framePort)
            let frames = IteratorBox(connection.frames(STXFrameCodec()).makeAsyncIterator())
            let request = ByteBuffer(bytes: [0x01])
            return WorkloadSession(
                operationsPerCall: batch,
                operation: {
                    try await connection.write(request)
                    for _ in 0..<batch {
                        guard try await frames.next() != nil else { throw HarnessError("the frames ended") }
                    }
                },
                end: { try await connection.close() }
            )
        }
    }
}
