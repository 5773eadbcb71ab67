import Foundation
import NIOCore
import Testing

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// A RunLoop-era client connected to a raw peer, its run loop on a thread of the test.
struct RunLoopClient {
    let home: RunLoopThread
    let socket: AsyncSocket
    let recorder: RunLoopSocketRecorder
    let peer: RawPeer
    let listener: RawListener

    static func connect(configure: (RunLoopSocketRecorder) -> Void = { _ in }) async throws -> RunLoopClient {
        let listener = try RawListener()
        let home = RunLoopThread(name: "client-run-loop")
        let recorder = RunLoopSocketRecorder()
        recorder.expectedRunLoop = home.runLoop
        configure(recorder)
        let socket = AsyncSocket(delegate: recorder)
        let port = listener.port
        try await home.sync { try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5) }
        let peer = try await onThread { listener.accept() }
        try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        return RunLoopClient(home: home, socket: socket, recorder: recorder, peer: peer, listener: listener)
    }

    func close() {
        socket.delegate = nil
        socket.disconnect()
        peer.close()
        listener.close()
        home.stop()
    }
}

@Suite(
    "AsyncSocket (RunLoop era): connecting, accepting, closing — the original's callback orders",
    .timeLimit(.minutes(1))
)
struct AsyncSocketConnectingTests {
    @Test("connect: onSocketWillConnect inside the call, then didConnectToHost with the numeric host on the run loop")
    func connectOrder() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        #expect(client.recorder.events == [.willConnect, .connected(host: "127.0.0.1", port: client.listener.port)])
        #expect(client.socket.isConnected())
        #expect(client.socket.connectedHost() == "127.0.0.1")
        #expect(client.socket.connectedPort() == client.listener.port)
        #expect(client.socket.isIPv4() && !client.socket.isIPv6())
        #expect(client.recorder.violations.isEmpty)
    }

    @Test("connect by name: didConnectToHost gets the numeric address, never the name")
    func connectByNameReportsANumericHost() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = RunLoopSocketRecorder()
        let socket = AsyncSocket(delegate: recorder)
        let port = listener.port
        try await home.sync { try socket.connect(toHost: "localhost", onPort: port, withTimeout: 5) }
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        try await recorder.wait { $0.contains(.connected(host: "127.0.0.1", port: port)) }
        socket.disconnect()
    }

    @Test("a veto from onSocketWillConnect: connect throws canceledError and nothing else happens")
    func vetoThrowsCanceled() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let recorder = RunLoopSocketRecorder()
        recorder.willConnectAnswer = false
        let socket = AsyncSocket(delegate: recorder)
        #expect {
            try socket.connect(toHost: "127.0.0.1", onPort: listener.port)
        } throws: { error in
            (error as? AsyncSocketError)?.code == .canceledError && (error as NSError).domain == AsyncSocketErrorDomain
                && (error as NSError).code == 1
        }
        #expect(recorder.events == [.willConnect])
        #expect(!socket.isConnected())
        // The same instance connects afterwards.
        let home = RunLoopThread()
        defer { home.stop() }
        recorder.willConnectAnswer = true
        let port = listener.port
        try await home.sync { try socket.connect(toHost: "127.0.0.1", onPort: port) }
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        try await recorder.wait { $0.contains(.connected(host: "127.0.0.1", port: port)) }
        socket.disconnect()
    }

    @Test("misuse throws AsyncSocketException with the original's reasons, and never traps")
    func misuseThrows() async throws {
        let socket = AsyncSocket()
        #expect(throws: AsyncSocketException(reason: "Attempting to connect without a delegate. Set a delegate first."))
        {
            try socket.connect(toHost: "127.0.0.1", onPort: 1)
        }
        #expect(throws: AsyncSocketException(reason: "Attempting to accept without a delegate. Set a delegate first."))
        {
            try socket.accept(onPort: 0)
        }
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        #expect(
            throws: AsyncSocketException(
                reason: "Attempting to connect while connected or accepting connections. Disconnect first."
            )
        ) {
            try client.socket.connect(toHost: "127.0.0.1", onPort: client.listener.port)
        }
        #expect(
            throws: AsyncSocketException(
                reason: "Attempting to accept while connected or accepting connections. Disconnect first."
            )
        ) {
            try client.socket.accept(onPort: 0)
        }
    }

    @Test("connect to sockaddr bytes reaches the listener; bytes that are no address throw code -1")
    func connectToAddressBytes() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = RunLoopSocketRecorder()
        let socket = AsyncSocket(delegate: recorder)
        #expect {
            try socket.connect(toAddress: Data([1, 2, 3]))
        } throws: { error in
            (error as? AsyncSocketError)?.code == .cfSocketError
        }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: Int(listener.port))
        let bytes = address.sockaddrData
        try await home.sync { try socket.connect(toAddress: bytes, withTimeout: 5) }
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        try await recorder.wait { $0.contains(.connected(host: "127.0.0.1", port: listener.port)) }
        #expect(socket.connectedAddress() == bytes)
        socket.disconnect()
    }

    @Test("a refused connection: willDisconnect in NSPOSIXErrorDomain with ECONNREFUSED, then didDisconnect")
    func refusedConnection() async throws {
        let bound = try BoundSocket(host: "127.0.0.1", port: 0)
        defer { bound.close() }
        let port = UInt16(try SocketAddress.localPort(of: bound.fd))
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = RunLoopSocketRecorder()
        recorder.expectedRunLoop = home.runLoop
        let socket = AsyncSocket(delegate: recorder)
        try await home.sync { try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5) }
        let events = try await recorder.waitForDisconnect()
        #expect(
            events == [
                .willConnect, .willDisconnect(domain: NSPOSIXErrorDomain, code: Int(ECONNREFUSED)), .disconnected,
            ]
        )
        #expect(recorder.violations.isEmpty)
    }

    @Test("a connect timeout: willDisconnect with code 2 (connectTimeoutError), then didDisconnect")
    func connectTimeout() async throws {
        let listener = try RawListener(backlog: 0)
        defer { listener.close() }
        var fillers: [RawPeer] = []
        for _ in 0..<4 {
            if let filler = try? await onThread({ () throws -> RawPeer? in
                try? RawPeer.connectNonBlocking(port: listener.port)
            }) {
                fillers.append(filler)
            }
        }
        defer { for filler in fillers { filler.close() } }
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = RunLoopSocketRecorder()
        let socket = AsyncSocket(delegate: recorder)
        let port = listener.port
        try await home.sync { try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 0.3) }
        let events = try await recorder.waitForDisconnect()
        #expect(events == [.willConnect, .willDisconnect(domain: AsyncSocketErrorDomain, code: 2), .disconnected])
        #expect((recorder.errors.last??.localizedDescription) == "Attempt to connect to host timed out")
    }

    @Test("a name that does not resolve: willDisconnect in kCFStreamErrorDomainNetDB")
    func unresolvableName() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = RunLoopSocketRecorder()
        let socket = AsyncSocket(delegate: recorder)
        try await home.sync { try socket.connect(toHost: "no-such-host.invalid", onPort: 80, withTimeout: 10) }
        let events = try await recorder.waitForDisconnect()
        guard case .willDisconnect(let domain, _) = events.dropLast().last else {
            Issue.record("no willDisconnect: \(events)")
            return
        }
        #expect(domain == "kCFStreamErrorDomainNetDB")
    }

    @Test("accept: didAccept → wantsRunLoop → willConnect on the listener's run loop, didConnect on the new one")
    func acceptOrder() async throws {
        let listenerHome = RunLoopThread(name: "listener")
        let childHome = RunLoopThread(name: "child")
        defer {
            listenerHome.stop()
            childHome.stop()
        }
        let recorder = RunLoopSocketRecorder()
        recorder.expectedRunLoop = listenerHome.runLoop
        recorder.runLoopForNewSockets = childHome.runLoop
        let childRunLoop = childHome.runLoop!
        let connectedOnChildLoop = LockedFlag()
        recorder.onConnect = { _ in connectedOnChildLoop.set(RunLoop.current === childRunLoop) }
        let listener = AsyncSocket(delegate: recorder, userData: 7)
        try await listenerHome.sync { try listener.accept(onInterface: "127.0.0.1", port: 0) }
        let port = listener.localPort()
        #expect(port != 0)
        #expect(!listener.isConnected())
        let peer = try await onThread { try RawPeer.connect(port: port) }
        defer { peer.close() }
        let events = try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        #expect(events.prefix(3) == [.accepted, .wantsRunLoop, .willConnect])
        guard case .connected(let host, _) = events.last else { return }
        #expect(host == "127.0.0.1")
        #expect(connectedOnChildLoop.value == true)
        #expect(recorder.violations.isEmpty)
        let child = try #require(recorder.acceptedSockets.first)
        #expect(child.userData == 0)
        #expect(child.delegate === recorder)
        #expect(child.isConnected())
        // The accepted socket works: it reads what the peer sends.
        child.readData(toLength: 3, withTimeout: 5, tag: 9)
        peer.send("abc")
        try await recorder.wait { $0.contains(.read(Data("abc".utf8), tag: 9)) }
        child.disconnect()
        listener.disconnect()
    }

    @Test("a vetoed accepted socket gets onSocketDidDisconnect alone")
    func acceptedVeto() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = RunLoopSocketRecorder()
        recorder.willConnectAnswer = false
        let listener = AsyncSocket(delegate: recorder)
        try await home.sync { try listener.accept(onInterface: "localhost", port: 0) }
        let peer = try await onThread { try RawPeer.connect(port: listener.localPort()) }
        defer { peer.close() }
        let events = try await recorder.waitForDisconnect()
        #expect(events == [.accepted, .wantsRunLoop, .willConnect, .disconnected])
        // The peer sees the connection closed.
        #expect(try await onThread { peer.receiveToEnd() }.isEmpty)
        listener.disconnect()
    }

    @Test("accept on a port in use fails with code -1 (cfSocketError) and no callback")
    func acceptOnAPortInUse() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let first = RunLoopSocketRecorder()
        let listener = AsyncSocket(delegate: first)
        try await home.sync { try listener.accept(onInterface: "127.0.0.1", port: 0) }
        defer { listener.disconnect() }
        let port = listener.localPort()
        let second = AsyncSocket(delegate: first)
        #expect {
            try second.accept(onInterface: "127.0.0.1", port: port)
        } throws: { error in
            (error as? AsyncSocketError)?.code == .cfSocketError && (error as NSError).code == -1
        }
        #expect(first.events.isEmpty)
    }
}

/// A value set once from a callback and read by the test.
final class LockedFlag: @unchecked Sendable {
    // Sendable: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: Bool?
    func set(_ value: Bool) { lock.withLock { storage = value } }
    var value: Bool? { lock.withLock { storage } }
}
