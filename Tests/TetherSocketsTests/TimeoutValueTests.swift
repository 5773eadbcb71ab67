import Foundation
import NIOCore
import Testing
import TetherTestSupport

@testable import TetherSockets

/// Every `TimeInterval` a caller passes or a delegate returns is accepted, and none traps: infinite, NaN and values too
/// large for the engine's clock mean no timeout (API.md §0.2, principle 3).
@Suite struct TimeoutValueTests {
    static let unbounded: [TimeInterval] = [-.infinity, -1e300, -1, .nan, .infinity, 1e300, 9.3e9, 1e9 + 1]

    @Test func theConversionTable() {
        #expect(TimeoutValue.timeout(-1) == nil)
        #expect(TimeoutValue.timeout(-.infinity) == nil)
        #expect(TimeoutValue.timeout(.nan) == nil)
        #expect(TimeoutValue.timeout(.infinity) == nil)
        #expect(TimeoutValue.timeout(1e300) == nil)
        #expect(TimeoutValue.timeout(9.3e9) == nil)
        #expect(TimeoutValue.timeout(0) == .zero)
        #expect(TimeoutValue.timeout(1.5) == .milliseconds(1500))
        #expect(TimeoutValue.timeout(TimeoutValue.longest) == .seconds(Int64(TimeoutValue.longest)))
        #expect(TimeoutValue.extensionTime(0) == .zero)
        #expect(TimeoutValue.extensionTime(-1) == .zero)
        #expect(TimeoutValue.extensionTime(.nan) == .zero)
        #expect(TimeoutValue.extensionTime(2) == .seconds(2))
        #expect(TimeoutValue.extensionTime(.infinity) == .seconds(Int64(TimeoutValue.longest)))
        #expect(TimeoutValue.extensionTime(1e300) == .seconds(Int64(TimeoutValue.longest)))
        #expect(TimeoutValue.delay(.nan) == .zero)
        #expect(TimeoutValue.delay(-3) == .zero)
        #expect(TimeoutValue.delay(.infinity) == .seconds(Int64(TimeoutValue.longest)))
    }

    @Test(arguments: unbounded)
    func aConnectWithAnyTimeoutConnects(timeout: TimeInterval) async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let recorder = SocketRecorder(label: "connect-\(timeout)")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.alternateAddressDelay = timeout
        try socket.connect(toHost: "localhost", onPort: listener.port, withTimeout: timeout)
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        socket.disconnect()
    }

    @Test(arguments: unbounded)
    func readsAndWritesWithAnyTimeoutComplete(timeout: TimeInterval) async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.write(Data("out".utf8), withTimeout: timeout, tag: 1)
        connection.socket.readData(toLength: 2, withTimeout: timeout, tag: 2)
        connection.socket.readData(to: Data("\n".utf8), withTimeout: timeout, tag: 3)
        connection.socket.readData(withTimeout: timeout, tag: 4)
        #expect(try await onThread { connection.peer.receive(count: 3) } == Array("out".utf8))
        connection.peer.send("ab" + "cd\n" + "e")
        try await connection.recorder.wait { $0.contains(.read(Data("e".utf8), tag: 4)) }
        #expect(connection.recorder.reads().map(\.1) == [2, 3, 4])
        #expect(connection.recorder.events.contains(.wrote(tag: 1)))
        #expect(!connection.recorder.events.contains { $0.isDisconnect })
    }

    @Test(arguments: [TimeInterval.infinity, 1e300, 9.3e9])
    func aDelegateExtendingATimeoutBeyondTheClockKeepsTheReadWaiting(extensionTime: TimeInterval) async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.recorder.timeoutExtensions = [extensionTime]
        connection.socket.readData(toLength: 4, withTimeout: 0.05, tag: 1)
        try await connection.recorder.wait { $0.contains { if case .readTimeoutAsked = $0 { true } else { false } } }
        // The extension is in effect (a read that timed out would close the socket): the bytes still complete it.
        connection.peer.send("late")
        try await connection.recorder.wait { $0.contains(.read(Data("late".utf8), tag: 1)) }
        #expect(!connection.recorder.events.contains { $0.isDisconnect })
    }

    @Test(arguments: [TimeInterval.nan, 0, -1, -TimeInterval.infinity])
    func aDelegateAnsweringNoExtensionTimesTheReadOut(answer: TimeInterval) async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.recorder.timeoutExtensions = [answer]
        connection.socket.readData(toLength: 4, withTimeout: 0.05, tag: 1)
        let error = try await connection.recorder.waitForDisconnect()
        #expect(error?.code == .readTimeout)
    }

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(1e15), .seconds(9.3e9), .nanoseconds(Int64.max)])
    func anAsyncFaceTimeoutOfAnyLengthNeverTraps(duration: Duration) async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, timeout: duration)
        var connections = listener.connections.makeAsyncIterator()
        let server = try #require(try await connections.next())
        try await server.write(ByteBuffer(string: "ok"), timeout: duration)
        let read = try await client.read(toLength: 2, timeout: duration)
        #expect(read == ByteBuffer(string: "ok"))
        try await client.close()
        try await server.close()
        try await listener.close()
    }

    @Test(arguments: [Duration.seconds(Int64.min), .seconds(-1), .zero])
    func anAsyncFaceTimeoutAlreadyOverIsATypedError(duration: Duration) async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        await #expect(throws: GCDAsyncSocketError.self) {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, timeout: duration)
        }
        try await listener.close()
    }
}
