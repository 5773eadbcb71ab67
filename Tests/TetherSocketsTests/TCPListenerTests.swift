import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct TCPListenerTests {
    /// A flood of clients against a consumer that does not iterate: the listener accepts up to its pending limit
    /// (plus at most the rest of one accept burst of the server channel), pauses, stays paused, and once the
    /// consumer iterates every client arrives, none lost.
    @Test func anAcceptFloodStopsAtThePendingLimitAndLosesNoClient() async throws {
        let limit = 8
        let clients = 40
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, maxPendingConnections: limit)
        var peers: [RawPeer] = []
        defer { for peer in peers { peer.close() } }
        for index in 0..<clients {
            // The kernel completes the handshake from its backlog (256) whether the listener accepts or not.
            let peer = try RawPeer.connect(port: UInt16(listener.localPort))
            peer.send("\(index)\n")
            peers.append(peer)
        }
        // Wait for the pause itself.
        while !listener.gate.snapshot.paused {
            await Task.yield()
        }
        // Anything the loop had started to accept is counted on the server loop before the pause is seen; a round
        // trip through that loop settles the count.
        let burst = 4  // ChannelOptions.maxMessagesPerRead of a server channel: accepts in one readable event
        await listener.loopRoundTrip()
        let pending = listener.gate.snapshot
        #expect(pending.paused)
        #expect(pending.outstanding >= limit)
        #expect(pending.outstanding <= limit + burst - 1)
        // Still paused and not accepting after more loop turns.
        for _ in 0..<10 { await listener.loopRoundTrip() }
        #expect(listener.gate.snapshot.outstanding == pending.outstanding)

        var received = Set<Int>()
        var iterator = listener.connections.makeAsyncIterator()
        while received.count < clients, let connection = try await iterator.next() {
            let line = try await connection.read(upTo: [0x0A])
            received.insert(Int(String(buffer: line).dropLast())!)
            try await connection.close()
        }
        #expect(received == Set(0..<clients))
        #expect(listener.gate.snapshot.outstanding == 0)
        #expect(listener.gate.snapshot.pauses >= 1)
        try await listener.close()
    }

    @Test func aPendingLimitBelowOneIsABadParameter() async throws {
        do {
            _ = try await TCPListener.bind(host: "127.0.0.1", port: 0, maxPendingConnections: 0)
            Issue.record("expected badParam")
        } catch GCDAsyncSocketError.Code.badParam {}
    }

    @Test func addressesStayReadableAfterClose() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let port = listener.localPort
        let accepted = Task { () -> TCPConnection? in
            var iterator = listener.connections.makeAsyncIterator()
            return try await iterator.next()
        }
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        let server = try #require(try await accepted.value)
        try await client.close()
        try await server.close()
        try await listener.close()
        #expect(client.remoteAddress.port == port)
        #expect(server.localAddress.port == port)
        #expect(server.remoteAddress.port == client.localAddress.port)
        #expect(listener.localAddress.port == port)
        #expect(listener.localPort == port)
    }

    /// A connection is handed over once it is active: a listener closed the moment it yields one (before NIO
    /// registered it, which it then never does) no longer hands over a connection whose reads wait for ever.
    @Test func aConnectionYieldedAsTheListenerClosesIsLiveOrNeverYielded() async throws {
        for _ in 0..<20 {
            let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
            let port = listener.localPort
            async let client = onThread { () throws -> RawPeer in
                let peer = try RawPeer.connect(port: UInt16(port))
                peer.send([1, 2, 3])
                return peer
            }
            let connection = try #require(try await listener.connections.first { _ in true })
            try await listener.close()
            let peer = try await client
            defer { peer.close() }
            let bytes = try await connection.read(toLength: 3, timeout: .seconds(5))
            #expect(Array(bytes.readableBytesView) == [1, 2, 3])
            await #expect(throws: GCDAsyncSocketError.self) {
                try await connection.read(toLength: 1, timeout: .milliseconds(-5))
            }
            try await connection.close()
        }
    }
}
