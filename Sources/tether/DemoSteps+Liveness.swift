import NIOCore
import TetherSockets

extension DemoSteps {
    /// A heartbeat against a peer that accepts and then says nothing: the ping goes out after 100 ms without
    /// writing, no reply comes within 300 ms, and the connection closes with the heartbeat's own error. A refused
    /// connect first, to show that it is told apart from a lost connection.
    static func heartbeatClosesASilentPeer() async throws -> String {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let refusedPort = listener.localPort
        try await listener.close()
        var refusal = "refused"
        do {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: refusedPort, timeout: .seconds(2))
        } catch GCDAsyncSocketError.Disconnection.notConnected {
            refusal = "a closed port: not connected"
        } catch {
            refusal = "a closed port: \(error)"
        }
        let silent = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: silent.localPort)
        var accepted = silent.connections.makeAsyncIterator()
        guard let peer = try await accepted.next() else { throw DemoFailure(description: "no connection accepted") }
        try await client.setHeartbeat(
            try Heartbeat(ping: Array("PING\n".utf8), interval: .milliseconds(100), timeout: .milliseconds(300))
        )
        var outcome = "no error"
        do {
            while try await client.readAvailable() != nil {}
        } catch let error as GCDAsyncSocketError where error.code == .heartbeatTimeout {
            outcome = "closed with heartbeatTimeout (connection lost)"
        }
        let ping = try await peer.readAvailable(timeout: .seconds(1)).map { String(buffer: $0) } ?? ""
        try? await peer.close()
        try await silent.close()
        guard outcome.hasPrefix("closed"), ping.hasPrefix("PING") else {
            throw DemoFailure(description: "\(outcome); the peer saw \(ping.debugDescription)")
        }
        return "\(refusal); a silent peer got the ping and no answer came: \(outcome)"
    }
}
