import Foundation
import NIOCore
import Testing
import TetherSockets
import TetherTestSupport

/// The ported client of the Liveness article: keepalive and a heartbeat on a `GCDAsyncSocket`, and the two ways a
/// connection can end.
final class LivelyClient: GCDAsyncSocketDelegate, @unchecked Sendable {
    // Sendable: the log is locked; the socket is Sendable.
    let socket = GCDAsyncSocket()
    let log = EventLog<String>()

    func start(host: String, port: UInt16) throws {
        socket.setDelegate(self, delegateQueue: DispatchQueue(label: "client"))
        socket.keepalive = try TCPKeepalive(idle: .seconds(30), interval: .seconds(5), count: 3)
        socket.heartbeat = try Heartbeat(
            ping: Array("PING\r\n".utf8),
            interval: .seconds(15),
            timeout: .seconds(5)
        )
        socket.idleTimeouts = try IdleTimeouts(read: .seconds(60))
        try socket.connect(toHost: host, onPort: port, withTimeout: 10)
    }

    func socket(_ sock: GCDAsyncSocket, didNotConnect error: any Error) {
        // The connection never came up: try again later.
        log.append("not connected")
    }

    func socketDidDisconnect(_ sock: GCDAsyncSocket, withError err: (any Error)?) {
        // Still called after didNotConnect, as the original calls it: code written for the original keeps working.
        log.append("disconnected")
    }

    func socket(_ sock: GCDAsyncSocket, didBecomeIdle event: IdleStateEvent) {
        log.append("idle \(event)")
    }
}

@Suite(.timeLimit(.minutes(1)))
struct LivenessArticleExamples {
    @Test func articleSnippetsAreCompiledHere() throws {
        let article = "Sources/TetherSockets/TetherSockets.docc/Liveness.md"
        #expect(try ArticleSnippets.checkedBlocks(ofArticle: article).count == 4)
        let missing = try ArticleSnippets.blocksMissing(
            fromArticle: article,
            inFiles: ["Tests/TetherSocketsTests/LivenessArticleExamples.swift"]
        )
        #expect(missing.isEmpty, "not in this file:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test func theClientHearsNotConnectedThenDisconnectedWhenRefused() async throws {
        let (blocker, port) = try refusingPort()
        defer { blocker.close() }
        let client = LivelyClient()
        try client.start(host: "127.0.0.1", port: port)
        let events = try await client.log.wait(timeout: .seconds(10)) { $0.contains("disconnected") }
        #expect(events == ["not connected", "disconnected"])
    }

    @Test func theAsyncFaceWatchesAndRetries() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let host = "127.0.0.1"
        let port = Int(server.port)
        var connection: TCPConnection?
        for attempt in 1...3 {
            do {
                connection = try await TCPConnection.connect(
                    host: host,
                    port: port,
                    keepalive: try TCPKeepalive(idle: .seconds(30), interval: .seconds(5), count: 3)
                )
                break
            } catch GCDAsyncSocketError.Disconnection.notConnected where attempt < 3 {
                continue  // never came up: try again
            }
        }
        let live = try #require(connection)
        try await live.setHeartbeat(
            try Heartbeat(ping: Array("PING\r\n".utf8), interval: .seconds(15), timeout: .seconds(5))
        )
        for await event in live.idleEvents(try IdleTimeouts(read: .milliseconds(50))) {
            if event == .read { break }  // nothing heard for a while: the heartbeat will tell
        }
        try await live.close()
    }

    @Test func aHeartbeatTimeoutEndsEveryOperation() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(peer.port))
        try await connection.setHeartbeat(
            try Heartbeat(ping: Array("PING\r\n".utf8), interval: .milliseconds(50), timeout: .milliseconds(100))
        )
        do {
            _ = try await connection.readAvailable()
        } catch GCDAsyncSocketError.Code.heartbeatTimeout {
            // The peer did not answer the ping in time: the connection is closed.
        }
        let after = await #expect(throws: GCDAsyncSocketError.self) { _ = try await connection.readAvailable() }
        #expect(after?.code == .heartbeatTimeout)
    }
}
