import NIOCore
import TetherSockets

extension DemoSteps {
    /// A flood of clients against a listener whose consumer has not started: it accepts up to its pending limit and
    /// then leaves the rest in the kernel's backlog; once the consumer iterates, every client is served.
    static func listenerBackPressure() async throws -> String {
        let limit = 4
        let clients = 24
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, maxPendingConnections: limit)
        var connections: [TCPConnection] = []
        for index in 0..<clients {
            let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort)
            try await client.write(ByteBuffer(string: "\(index)\n"))
            connections.append(client)
        }
        var served = Set<Int>()
        for try await connection in listener.connections {
            let line = try await connection.read(upTo: [0x0A], timeout: .seconds(5))
            if let index = Int(String(buffer: line).dropLast()) { served.insert(index) }
            try await connection.close()
            if served.count == clients { break }
        }
        for client in connections { try await client.close() }
        try await listener.close()
        guard served == Set(0..<clients) else {
            throw DemoFailure(description: "served \(served.count) of \(clients) clients")
        }
        return "\(clients) clients against a pending limit of \(limit) (the rest wait in the kernel's backlog): "
            + "none lost, all served"
    }
}
