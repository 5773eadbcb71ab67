import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct TCPConnectionTests {
    @Test func readsToLengthToSeparatorAndAvailable() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        peer.send("abcdHELO\r\nrest")
        let four = try await connection.read(toLength: 4)
        #expect(String(buffer: four) == "abcd")
        let line = try await connection.read(upTo: [0x0D, 0x0A])
        #expect(String(buffer: line) == "HELO\r\n")
        let rest = try await connection.readAvailable()
        #expect(rest.map { String(buffer: $0) } == "rest")
        #expect(try await connection.read(toLength: 0).readableBytes == 0)
        try await connection.close()
    }

    @Test func writesArriveInOrderWithTheirAddresses() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        try await connection.write(ByteBuffer(string: "hello "))
        try await connection.write(contentsOf: Array("world".utf8))
        let received = try await onThread { peer.receive(count: 11) }
        #expect(received == Array("hello world".utf8))
        #expect(connection.remoteAddress.port == Int(listener.port))
        #expect(connection.localAddress.port != nil)
        #expect(!connection.isSecure)
        try await connection.close()
    }

    @Test func aTimedOutReadConsumesNothingAndKeepsTheConnection() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        peer.send("abc")
        await #expect(throws: GCDAsyncSocketError.self) {
            _ = try await connection.read(toLength: 5, timeout: .milliseconds(100))
        }
        do {
            _ = try await connection.read(toLength: 5, timeout: .zero)
            Issue.record("a zero timeout must fail when the buffer cannot satisfy the read")
        } catch GCDAsyncSocketError.Code.readTimeout {}
        peer.send("de")
        let all = try await connection.read(toLength: 5, timeout: .seconds(5))
        #expect(String(buffer: all) == "abcde")
        try await connection.close()
    }

    @Test func maxLengthExceededConsumesNothing() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        peer.send("abcdefgh\n")
        do {
            _ = try await connection.read(upTo: [0x0A], maxLength: 4)
            Issue.record("expected readMaxedOut")
        } catch GCDAsyncSocketError.Code.readMaxedOut {}
        let line = try await connection.read(upTo: [0x0A], maxLength: 9)
        #expect(String(buffer: line) == "abcdefgh\n")
        try await connection.close()
    }

    @Test func cancellingAWaitingReadConsumesNothing() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        peer.send("ab")
        let waiting = Task { try await connection.read(toLength: 10) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        let rest = try await connection.readAvailable(timeout: .seconds(5))
        #expect(rest.map { String(buffer: $0) } == "ab")
        try await connection.close()
    }

    @Test func peerCloseKeepsPartialBytesForReadAvailable() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer { listener.close() }
        peer.send("xyz")
        peer.shutdownWrite()
        do {
            _ = try await connection.read(toLength: 10)
            Issue.record("expected closed")
        } catch GCDAsyncSocketError.Code.closed {}
        let partial = try await connection.readAvailable()
        #expect(partial.map { String(buffer: $0) } == "xyz")
        #expect(try await connection.readAvailable() == nil)
        // Writing still works after the peer's half-close.
        try await connection.write(ByteBuffer(string: "late"))
        #expect(try await onThread { peer.receive(count: 4) } == Array("late".utf8))
        peer.close()
        try await connection.close()
    }

    @Test func halfCloseSendsEndOfStreamAndReadingGoesOn() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        try await connection.write(ByteBuffer(string: "request"))
        try await connection.halfClose()
        let request = try await onThread { peer.receiveToEnd() }
        #expect(request == Array("request".utf8))
        peer.send("response")
        let response = try await connection.read(toLength: 8, timeout: .seconds(5))
        #expect(String(buffer: response) == "response")
        try await connection.close()
    }

    @Test func afterBothSidesCloseReadsDrainTheBufferThenEnd() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer { listener.close() }
        try await connection.halfClose()
        _ = try await onThread { peer.receiveToEnd() }
        peer.send("last words")
        peer.close()
        // Give the channel time to see both ends closed before reading.
        try await Task.sleep(for: .milliseconds(100))
        let rest = try await connection.readAvailable(timeout: .seconds(5))
        #expect(rest.map { String(buffer: $0) } == "last words")
        #expect(try await connection.readAvailable() == nil)
        await #expect(throws: GCDAsyncSocketError.self) { try await connection.write(ByteBuffer(string: "x")) }
        try await connection.close()
    }

    @Test func operationsAfterCloseThrowClosed() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        let pending = Task { try await connection.read(toLength: 4) }
        try await Task.sleep(for: .milliseconds(50))
        try await connection.close()
        try await connection.close()
        await #expect(throws: GCDAsyncSocketError.self) { _ = try await pending.value }
        await #expect(throws: GCDAsyncSocketError.self) { _ = try await connection.read(toLength: 1) }
        await #expect(throws: GCDAsyncSocketError.self) { try await connection.write(ByteBuffer(string: "x")) }
    }

    @Test func badArgumentsThrowBadParam() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        for body in [
            { _ = try await connection.read(toLength: -1) },
            { _ = try await connection.read(upTo: []) },
            { _ = try await connection.read(upTo: [1, 2], maxLength: 1) },
            { _ = try await connection.readAvailable(maxLength: 0) },
            { _ = try await TCPConnection.connect(host: "", port: 80) },
            { _ = try await TCPConnection.connect(host: "127.0.0.1", port: 0) },
            { _ = try await TCPConnection.connect(host: "127.0.0.1", port: 70_000) },
            { _ = try await TCPListener.bind(host: "127.0.0.1", port: -1) },
        ] as [@Sendable () async throws -> Void] {
            do {
                try await body()
                Issue.record("expected badParam")
            } catch GCDAsyncSocketError.Code.badParam {}
        }
        try await connection.close()
    }

    @Test func refusedAndTimedOutConnectsThrow() async throws {
        let probe = try RawListener()
        let port = probe.port
        probe.close()
        do {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: Int(port))
            Issue.record("expected a refusal")
        } catch let error as GCDAsyncSocketError {
            #expect(error.posixErrorCode == .ECONNREFUSED)
        }
        let full = try RawListener(backlog: 0)
        defer { full.close() }
        var fillers: [RawPeer] = []
        for _ in 0..<4 { fillers.append(try RawPeer.connectNonBlocking(port: full.port)) }
        defer { for filler in fillers { filler.close() } }
        do {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: Int(full.port), timeout: .milliseconds(300))
            Issue.record("expected a timeout")
        } catch GCDAsyncSocketError.Code.connectTimeout {}
    }

    // The server is a task on the cooperative pool, which the suite's heavy tests can starve for seconds on two
    // cores: a hang is caught by the time limit, not by a read timeout that a starved server could outlast.
    @Test(.timeLimit(.minutes(1)))
    func listenerYieldsConnectionsAndEndsAfterClose() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        #expect(listener.localPort != 0)
        let server = Task {
            var served = 0
            for try await connection in listener.connections {
                let line = try await connection.read(upTo: [0x0A])
                try await connection.write(line)
                try await connection.close()
                served += 1
            }
            return served
        }
        for index in 0..<3 {
            let client = try await TCPConnection.connect(host: "localhost", port: listener.localPort)
            try await client.write(ByteBuffer(string: "line \(index)\n"))
            let echoed = try await client.read(upTo: [0x0A])
            #expect(String(buffer: echoed) == "line \(index)\n")
            try await client.close()
        }
        try await listener.close()
        #expect(try await server.value == 3)
    }

    @Test func aSecondConcurrentIteratorIsABadConfiguration() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        var first = listener.connections.makeAsyncIterator()
        var second = listener.connections.makeAsyncIterator()
        do {
            _ = try await second.next()
            Issue.record("expected badConfig")
        } catch GCDAsyncSocketError.Code.badConfig {}
        try await listener.close()
        #expect(try await first.next() == nil)
    }
}

@Suite(.timeLimit(.minutes(2)))
struct TCPStressTests {
    @Test func aThousandConcurrentClientsEchoByteForByte() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let port = Int(server.port)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for client in 0..<1_000 {
                group.addTask {
                    let connection = try await TCPConnection.connect(
                        host: "127.0.0.1",
                        port: port,
                        timeout: .seconds(30)
                    )
                    var payload = ByteBuffer()
                    for byte in 0..<(64 + client % 200) {
                        payload.writeInteger(UInt8(truncatingIfNeeded: byte &+ client))
                    }
                    try await connection.write(payload)
                    let echoed = try await connection.read(toLength: payload.readableBytes, timeout: .seconds(30))
                    try await connection.close()
                    return echoed == payload
                }
            }
            var matched = 0
            for try await ok in group where ok { matched += 1 }
            #expect(matched == 1_000)
        }
    }

    @Test func asyncFaceEchoesThroughTheAsyncListener() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let server = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for try await connection in listener.connections {
                    group.addTask {
                        while let chunk = try await connection.readAvailable() {
                            try await connection.write(chunk)
                        }
                        try await connection.close()
                    }
                }
            }
        }
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort)
        var bytes = ByteBuffer()
        for index in 0..<(1 << 20) { bytes.writeInteger(UInt8(truncatingIfNeeded: index * 31)) }
        let expected = bytes
        async let sent: Void = client.write(bytes)
        let echoed = try await client.read(toLength: expected.readableBytes, timeout: .seconds(30))
        try await sent
        #expect(echoed == expected)
        try await client.close()
        try await listener.close()
        _ = try? await server.value
    }
}
