import Foundation
import NIOCore
import Testing

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 that refuses connections for as long as the returned socket lives (bound, not listening).
func refusingPort() throws -> (BoundSocket, UInt16) {
    let bound = try BoundSocket(host: "127.0.0.1", port: 0)
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(bound.fd, $0, &length) }
    }
    return (bound, UInt16(bigEndian: address.sin_port))
}

/// A listener whose connections never read and never write: a silent peer. It keeps every accepted socket.
final class SilentPeer: @unchecked Sendable {
    let recorder = GCDLivenessRecorder()
    let socket: GCDAsyncSocket
    private let kept = EventLog<GCDAsyncSocket>()

    init() throws {
        socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        recorder.onAccept = { [kept] child in kept.append(child) }
        try socket.accept(onInterface: "127.0.0.1", port: 0)
    }

    var port: UInt16 { socket.localPort }

    func stop() {
        socket.disconnect()
        for child in kept.events { child.disconnect() }
    }
}

/// The liveness additions on each face over loopback: `didNotConnect` and its order, the marks on the errors, the
/// heartbeat closing a silent peer and sparing one that answers, and idle reports.
@Suite(.timeLimit(.minutes(1)))
struct LivenessFaceTests {
    static let ping = try! Heartbeat(
        ping: Array("PING\n".utf8),
        interval: .milliseconds(100),
        timeout: .milliseconds(300)
    )
    /// For a peer that answers: the reply deadline is generous, so that a loaded machine's slow echo is no timeout.
    static let patientPing = try! Heartbeat(
        ping: Array("PING\n".utf8),
        interval: .milliseconds(100),
        timeout: .seconds(20)
    )

    // MARK: never connected vs lost

    @Test(arguments: [GCDAsyncSocket.CallbackDelivery.delegateQueue, .eventLoop])
    func aRefusedConnectCallsDidNotConnectThenDidDisconnectWithTheSameError(
        delivery: GCDAsyncSocket.CallbackDelivery
    ) async throws {
        let (blocker, port) = try refusingPort()
        defer { blocker.close() }
        let recorder = GCDLivenessRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.callbackDelivery = delivery
        try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5)
        let events = try await recorder.wait { $0.contains { $0.hasPrefix("disconnected") } }
        let refused = "posix \(POSIXErrorCode.ECONNREFUSED.rawValue), not connected"
        #expect(events == ["not connected: \(refused)", "disconnected: \(refused)"])
    }

    @Test func aConnectionThePeerClosesIsLostAndNeverReportedAsNotConnected() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = GCDLivenessRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        socket.readData(withTimeout: -1, tag: 1)
        _ = try await recorder.wait { $0.contains("connected") }
        try await server.recorder.wait { $0.contains(.accepted) }
        for child in server.recorder.acceptedSockets { child.disconnect() }
        let events = try await recorder.wait { $0.contains { $0.hasPrefix("disconnected") } }
        #expect(events == ["connected", "disconnected: code 7, lost"])
    }

    @Test func aRefusedConnectOnTheRunLoopFaceCallsDidNotConnectFirst() async throws {
        let (blocker, port) = try refusingPort()
        defer { blocker.close() }
        let thread = RunLoopThread()
        defer { thread.stop() }
        let recorder = RunLoopLivenessRecorder()
        let socket = AsyncSocket(delegate: recorder)
        try await thread.sync { try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5) }
        let events = try await recorder.wait { $0.contains("disconnected") }
        let refused = "\(NSPOSIXErrorDomain) \(POSIXErrorCode.ECONNREFUSED.rawValue)"
        #expect(events == ["not connected: \(refused)", "will disconnect: \(refused)", "disconnected"])
    }

    @Test func theAsyncFaceMarksWhatConnectThrowsAsNotConnected() async throws {
        let (blocker, port) = try refusingPort()
        defer { blocker.close() }
        let error = await #expect(throws: GCDAsyncSocketError.self) {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: Int(port))
        }
        #expect(error?.disconnection == .notConnected)
        #expect(error?.posixErrorCode == .ECONNREFUSED)
        do {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: Int(port))
        } catch GCDAsyncSocketError.Disconnection.notConnected {
            // The pattern a retry loop uses.
        }
    }

    // MARK: heartbeat

    @Test func theHeartbeatClosesASilentPeerOnTheGCDFace() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        let recorder = GCDLivenessRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.heartbeat = Self.ping
        try socket.connect(toHost: "127.0.0.1", onPort: peer.port, withTimeout: 5)
        let events = try await recorder.wait { $0.contains { $0.hasPrefix("disconnected") } }
        #expect(events == ["connected", "disconnected: code 9, lost"])
    }

    @Test func theHeartbeatClosesASilentPeerOnTheRunLoopFace() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        let thread = RunLoopThread()
        defer { thread.stop() }
        let recorder = RunLoopLivenessRecorder()
        let socket = AsyncSocket(delegate: recorder)
        socket.heartbeat = Self.ping
        try await thread.sync { try socket.connect(toHost: "127.0.0.1", onPort: peer.port, withTimeout: 5) }
        let events = try await recorder.wait { $0.contains("disconnected") }
        #expect(events == ["connected", "will disconnect: \(AsyncSocketErrorDomain) 6", "disconnected"])
    }

    @Test func theHeartbeatClosesASilentPeerOnTheAsyncFace() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(peer.port))
        try await connection.setHeartbeat(Self.ping)
        let error = await #expect(throws: GCDAsyncSocketError.self) {
            _ = try await connection.readAvailable()
        }
        #expect(error?.code == .heartbeatTimeout)
        #expect(error?.disconnection == .connectionLost)
    }

    @Test func theHeartbeatKeepsAPeerThatAnswersEachPing() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = GCDLivenessRecorder()
        recorder.onRead = { sock, _ in sock.readData(to: Data("\n".utf8), withTimeout: -1, tag: 1) }
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.heartbeat = Self.patientPing
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        socket.readData(to: Data("\n".utf8), withTimeout: -1, tag: 1)
        // Three pings answered: each reply came within the deadline, and the connection is still up.
        let events = try await recorder.wait { $0.filter { $0 == "read PING\n" }.count >= 3 }
        #expect(!events.contains { $0.hasPrefix("disconnected") })
        #expect(socket.isConnected)
        socket.disconnect()
    }

    @Test func withConfirmationOnlyTheApplicationsWordKeepsTheConnection() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        // A generous deadline while the application confirms (a loaded machine echoes slowly), a short one after.
        let heartbeat = try Heartbeat(
            ping: Array("PING\n".utf8),
            interval: .milliseconds(100),
            timeout: .seconds(20),
            reply: .confirmedByApplication
        )
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(server.port))
        try await connection.setHeartbeat(heartbeat)
        for _ in 0..<3 {
            let line = try await connection.read(upTo: Array("\n".utf8), timeout: .seconds(5))
            #expect(String(buffer: line) == "PING\n")
            connection.heartbeatReplyReceived()
        }
        // Unconfirmed from here on: the echo still arrives, but only the application's word counts.
        try await connection.setHeartbeat(
            try Heartbeat(
                ping: Array("PING\n".utf8),
                interval: .milliseconds(100),
                timeout: .milliseconds(300),
                reply: .confirmedByApplication
            )
        )
        let error = await #expect(throws: GCDAsyncSocketError.self) {
            while true { _ = try await connection.read(upTo: Array("\n".utf8)) }
        }
        #expect(error?.code == .heartbeatTimeout)
    }

    // MARK: idle

    @Test func eachFaceReportsReadIdleOnASilentConnection() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        let timeouts = try IdleTimeouts(read: .milliseconds(100))

        let recorder = GCDLivenessRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.idleTimeouts = timeouts
        try socket.connect(toHost: "127.0.0.1", onPort: peer.port, withTimeout: 5)
        let events = try await recorder.wait { $0.filter { $0 == "idle read" }.count >= 2 }
        #expect(events.first == "connected")
        socket.disconnect()

        let thread = RunLoopThread()
        defer { thread.stop() }
        let runLoopRecorder = RunLoopLivenessRecorder()
        let runLoopSocket = AsyncSocket(delegate: runLoopRecorder)
        runLoopSocket.idleTimeouts = timeouts
        try await thread.sync { try runLoopSocket.connect(toHost: "127.0.0.1", onPort: peer.port, withTimeout: 5) }
        _ = try await runLoopRecorder.wait { $0.contains("idle read") }
        try await thread.sync { runLoopSocket.disconnect() }

        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: Int(peer.port))
        var iterator = connection.idleEvents(try IdleTimeouts(read: .milliseconds(100), all: .milliseconds(150)))
            .makeAsyncIterator()
        var seen: Set<IdleStateEvent> = []
        while seen.count < 2, let event = await iterator.next() { seen.insert(event) }
        #expect(seen == [.read, .all])
        try await connection.close()
        // The stream ends with the connection.
        while await iterator.next() != nil {}
    }
}
