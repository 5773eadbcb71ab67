import Foundation
import Logging
import NIOCore
import Testing
import TetherConcurrency
import TetherSockets

/// Keeps every record logged through it.
private struct CapturingLogHandler: LogHandler {
    let records: LockedBox<[(Logger.Level, String)]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        records.withLock { $0.append((event.level, "\(event.message)")) }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct SocketLoggingTests {
    /// A delegate-face socket given a logger logs its connection's life: connected and disconnected at debug,
    /// each read and write at trace.
    @Test func theDelegateFaceLogsItsConnectionAtDebugAndItsIOAtTrace() async throws {
        let records = LockedBox<[(Logger.Level, String)]>([])
        let logger = Logger(label: "test") { _ in CapturingLogHandler(records: records) }
        let listener = try RawListener()
        defer { listener.close() }
        let recorder = SocketRecorder(label: "client")
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue, logger: logger)
        try socket.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        socket.write(Data("hi".utf8), withTimeout: -1, tag: 1)
        peer.send("ok")
        socket.readData(toLength: 2, withTimeout: -1, tag: 2)
        try await recorder.wait { $0.contains { if case .read = $0 { true } else { false } } }
        try await recorder.wait { $0.contains { if case .wrote = $0 { true } else { false } } }
        socket.disconnect()
        try await recorder.wait { $0.contains { if case .disconnected = $0 { true } else { false } } }
        let logged = records.withLock { $0 }
        #expect(logged.contains { $0.0 == .debug && $0.1 == "connected" })
        #expect(logged.contains { $0.0 == .trace && $0.1 == "read" })
        #expect(logged.contains { $0.0 == .trace && $0.1 == "wrote" })
        #expect(logged.contains { $0.0 == .debug && $0.1.hasPrefix("disconnected") })
    }

    /// An async listener given a logger logs the bound address and each connection it hands over, at debug.
    @Test func theAsyncListenerLogsItsAddressAndEachConnection() async throws {
        let records = LockedBox<[(Logger.Level, String)]>([])
        let logger = Logger(label: "test") { _ in CapturingLogHandler(records: records) }
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0, logger: logger)
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, logger: logger)
        var iterator = listener.connections.makeAsyncIterator()
        let server = try #require(try await iterator.next())
        try await server.close()
        try await client.close()
        try await listener.close()
        let logged = records.withLock { $0 }
        #expect(logged.contains { $0.0 == .debug && $0.1 == "listening" })
        #expect(logged.contains { $0.0 == .debug && $0.1 == "accepted" })
        #expect(logged.contains { $0.0 == .debug && $0.1 == "connected" })
    }
}

@Suite(.timeLimit(.minutes(1)))
struct UdpSocketLoggingTests {
    /// A delegate-face UDP socket given a logger logs its binding and its close at debug.
    @Test func theUdpDelegateFaceLogsBindingAndClose() async throws {
        let records = LockedBox<[(Logger.Level, String)]>([])
        let logger = Logger(label: "test") { _ in CapturingLogHandler(records: records) }
        let recorder = UdpRecorder(label: "logging")
        let socket = GCDAsyncUdpSocket(delegate: recorder, delegateQueue: recorder.queue, logger: logger)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        socket.send(Data("x".utf8), toHost: "127.0.0.1", port: socket.localPort(), withTimeout: -1, tag: 1)
        try await recorder.wait { $0.contains(.sent(tag: 1)) }
        socket.close()
        try await recorder.wait { $0.contains(.closed(code: nil)) }
        let logged = records.withLock { $0 }
        #expect(logged.contains { $0.0 == .debug && $0.1 == "bound" })
        #expect(logged.contains { $0.0 == .debug && $0.1 == "closed" })
    }
}
