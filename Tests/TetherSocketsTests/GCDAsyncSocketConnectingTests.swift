import Foundation
import NIOCore
import Testing
import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketConnectingTests {
    @Test func connectsAndAcceptsWithAnEchoRoundTrip() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try client.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        #expect(!client.isDisconnected)
        client.write(Data("hello\r\n"), withTimeout: 5, tag: 1)
        client.readData(to: GCDAsyncSocket.crlfData(), withTimeout: 5, tag: 2)
        let events = try await recorder.wait { $0.contains(.read(Data("hello\r\n"), tag: 2)) }
        #expect(events.first == .connected(host: "127.0.0.1", port: server.port))
        #expect(events.contains(.wrote(tag: 1)))
        #expect(client.isConnected)
        #expect(client.connectedHost == "127.0.0.1")
        #expect(client.connectedPort == server.port)
        #expect(client.localHost == "127.0.0.1")
        #expect(client.localPort != 0)
        #expect(client.isIPv4 && !client.isIPv6)
        #expect(client.connectedAddress.map(GCDAsyncSocket.port(fromAddress:)) == server.port)
        client.disconnect()
        let error = try await recorder.waitForDisconnect()
        #expect(error == nil)
        #expect(client.isDisconnected)
        #expect(recorder.events.disconnectCount == 1)
    }

    @Test func listenerReportsItsPortAndIsNotConnected() throws {
        let server = try EchoServer(interface: nil)
        defer { server.stop() }
        #expect(server.port != 0)
        #expect(!server.socket.isConnected)
        #expect(!server.socket.isDisconnected)
        #expect(server.socket.isIPv4 && server.socket.isIPv6)
    }

    @Test func localhostReachesAnIPv6OnlyListenerThroughTheAlternateFamily() async throws {
        // Hold the same port on 127.0.0.1 without listening, so the IPv4 attempt is refused for sure (tests run in
        // parallel: otherwise another test's IPv4 listener could own that port number). When some other IPv4 socket
        // already has that number (a connection's local port), take another IPv6 port.
        var found: (EchoServer, BoundSocket)?
        for _ in 0..<50 where found == nil {
            let candidate = try EchoServer(interface: "::1")
            do {
                found = (candidate, try BoundSocket(host: "127.0.0.1", port: candidate.port))
            } catch let error as POSIXError where error.code == .EADDRINUSE {
                candidate.stop()
            }
        }
        let (server, blocker) = try #require(found, "no port free on both ::1 and 127.0.0.1 in 50 tries")
        defer {
            blocker.close()
            server.stop()
        }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        #expect(client.isIPv4PreferredOverIPv6)
        try client.connect(toHost: "localhost", onPort: server.port, withTimeout: 5)
        let events = try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        #expect(events.first == .connected(host: "::1", port: server.port))
        #expect(client.isIPv6)
        client.disconnect()
    }

    @Test func alternateFamilyIsTriedAfterTheDelayWhenThePreferredOneHangs() async throws {
        // IPv4 is preferred but its listener's backlog is full, so that handshake never completes; the IPv6
        // listener on the same port answers once the alternate-address delay has passed.
        // The two listeners share a port number; when some other IPv6 socket already has the IPv4 one's number
        // (tests run in parallel), take another.
        let serverRecorder = SocketRecorder(label: "v6")
        var found: (RawListener, GCDAsyncSocket)?
        for _ in 0..<50 where found == nil {
            let candidate = try RawListener(backlog: 0)
            let server = GCDAsyncSocket(delegate: serverRecorder, delegateQueue: serverRecorder.queue)
            do {
                try server.accept(onInterface: "::1", port: candidate.port)
                found = (candidate, server)
            } catch let error as GCDAsyncSocketError where (error.underlying as? POSIXError)?.code == .EADDRINUSE {
                candidate.close()
            }
        }
        let (stalled, server) = try #require(found, "no port free on both 127.0.0.1 and ::1 in 50 tries")
        defer {
            server.disconnect()
            stalled.close()
        }
        var fillers: [RawPeer] = []
        for _ in 0..<4 { fillers.append(try RawPeer.connectNonBlocking(port: stalled.port)) }
        defer { for filler in fillers { filler.close() } }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        client.alternateAddressDelay = 0.2
        let started = ContinuousClock.now
        try client.connect(toHost: "localhost", onPort: stalled.port, withTimeout: 5)
        let events = try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        #expect(events.first == .connected(host: "::1", port: stalled.port))
        // Not before the delay: the IPv6 attempt only starts once it has passed.
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        client.disconnect()
    }

    @Test func dualStackListenerAcceptsBothFamiliesOnOnePort() async throws {
        let server = try EchoServer(interface: nil)
        defer { server.stop() }
        for host in ["127.0.0.1", "::1"] {
            let connection = try await TCPConnection.connect(host: host, port: Int(server.port))
            try await connection.write(ByteBuffer(string: host))
            let echoed = try await connection.read(toLength: host.utf8.count, timeout: .seconds(5))
            #expect(String(buffer: echoed) == host)
            #expect(connection.remoteAddress.ipAddress == host)
            try await connection.close()
        }
    }

    @Test(arguments: [true, false])
    func preferenceChoosesTheFamilyTriedFirst(preferIPv4: Bool) async throws {
        let server = try EchoServer(interface: "localhost")
        defer { server.stop() }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        client.isIPv4PreferredOverIPv6 = preferIPv4
        client.alternateAddressDelay = 2
        try client.connect(toHost: "localhost", onPort: server.port, withTimeout: 5)
        let events = try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        #expect(events.first == .connected(host: preferIPv4 ? "127.0.0.1" : "::1", port: server.port))
        client.disconnect()
    }

    @Test func disabledFamilyIsNotUsed() async throws {
        let server = try EchoServer(interface: "localhost")
        defer { server.stop() }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        client.isIPv4Enabled = false
        try client.connect(toHost: "localhost", onPort: server.port, withTimeout: 5)
        let events = try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        #expect(events.first == .connected(host: "::1", port: server.port))
        client.disconnect()
    }

    @Test func aNameWithOnlyADisabledFamilyReportsOther() async throws {
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        client.isIPv4Enabled = false
        try client.connect(toHost: "127.0.0.1", onPort: 9, withTimeout: 5)
        let error = try #require(try await recorder.waitForDisconnect())
        #expect(error.code == .other)
        #expect(error.message == "IPv4 has been disabled and DNS lookup found no IPv6 address.")
        #expect(recorder.events.count == 1)
    }

    @Test func connectsToSockaddrBytes() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let address = try #require(try GCDAsyncSocket.lookupHost("127.0.0.1", port: server.port).first)
        #expect(GCDAsyncSocket.isIPv4Address(address))
        #expect(GCDAsyncSocket.host(fromAddress: address) == "127.0.0.1")
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try client.connect(toAddress: address, withTimeout: 5)
        try await recorder.wait { $0.contains(.connected(host: "127.0.0.1", port: server.port)) }
        client.disconnect()
    }

    @Test func connectsViaAnInterfaceWithAFixedLocalPort() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let probe = try RawListener()
        let freePort = probe.port
        probe.close()
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try client.connect(toHost: "127.0.0.1", onPort: server.port, viaInterface: "lo:\(freePort)", withTimeout: 5)
        try await recorder.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        #expect(client.localPort == freePort)
        #expect(client.localHost == "127.0.0.1")
        client.disconnect()
    }

    @Test func unixDomainSocketsConnectAndAccept() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tether-\(UUID().uuidString).sock")
        #expect(FileManager.default.createFile(atPath: path.path, contents: Data("stale")))
        defer { try? FileManager.default.removeItem(at: path) }
        let serverRecorder = SocketRecorder(label: "unix-server")
        serverRecorder.onAccept = { _, child in child.readData(toLength: 4, withTimeout: 5, tag: 5) }
        let server = GCDAsyncSocket(delegate: serverRecorder, delegateQueue: serverRecorder.queue)
        try server.accept(on: path)
        defer { server.disconnect() }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try client.connect(to: path, withTimeout: 5)
        client.write(Data("ping"), withTimeout: 5, tag: 1)
        try await recorder.wait { $0.contains(.connectedURL(path.path)) }
        #expect(client.connectedUrl?.path == path.path)
        try await serverRecorder.wait { $0.contains(.read(Data("ping"), tag: 5)) }
        client.disconnect()
    }

    @Test func acceptedSocketsInheritOnlyTheDelegateQueueAndDelivery() async throws {
        let listenerRecorder = SocketRecorder(label: "listener")
        let listener = GCDAsyncSocket(delegate: listenerRecorder, delegateQueue: listenerRecorder.queue)
        listener.autoDisconnectOnClosedReadStream = false
        listener.isIPv4PreferredOverIPv6 = false
        listener.userData = "listener data"
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        defer { listener.disconnect() }
        let peer = try await onThread { try RawPeer.connect(port: listener.localPort) }
        defer { peer.close() }
        try await listenerRecorder.wait { $0.contains(.accepted) }
        let child = try #require(listenerRecorder.acceptedSockets.first)
        #expect(child.isConnected)
        #expect(child.delegate === listenerRecorder)
        #expect(child.delegateQueue === listenerRecorder.queue)
        #expect(child.autoDisconnectOnClosedReadStream)
        #expect(child.isIPv4PreferredOverIPv6)
        #expect(child.userData == nil)
        #expect(child.connectedHost == "127.0.0.1")
        #expect(!listenerRecorder.events.contains { if case .connected = $0 { true } else { false } })
        child.disconnect()
    }

    @Test func adoptsAConnectedDescriptor() async throws {
        let adopted = try await adoptConnectedDescriptor()
        defer { adopted.close() }
        let (socket, recorder) = (adopted.socket, adopted.recorder)
        #expect(socket.isConnected)
        #expect(socket.connectedPort == adopted.listener.port)
        socket.readData(toLength: 3, withTimeout: 5, tag: 1)
        adopted.peer.send("abc")
        try await recorder.wait { $0.contains(.read(Data("abc"), tag: 1)) }
        #expect(recorder.events.first == .connected(host: "127.0.0.1", port: adopted.listener.port))
    }

    @Test func adoptingANonInetDescriptorFails() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        #expect(throws: GCDAsyncSocketError.self) { try GCDAsyncSocket(fromConnectedSocketFD: fds[0]) }
    }

    // MARK: unhappy paths

    @Test func refusedConnectionReportsThePOSIXError() async throws {
        let probe = try RawListener()
        let port = probe.port
        probe.close()
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try client.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5)
        let error = try #require(try await recorder.waitForDisconnect())
        #expect(error.code == .other)
        #expect(error.domain == .posix)
        #expect(error.posixErrorCode == .ECONNREFUSED)
        #expect(recorder.events.count == 1)
    }

    @Test func connectTimesOutAgainstAFullBacklog() async throws {
        let listener = try RawListener(backlog: 0)
        defer { listener.close() }
        // Fill the accept queue; further handshakes are dropped by the kernel and never complete.
        var fillers: [RawPeer] = []
        for _ in 0..<4 {
            if let filler = try? await onThread({ () throws -> RawPeer? in
                try? RawPeer.connectNonBlocking(port: listener.port)
            }) {
                fillers.append(filler)
            }
        }
        defer { for filler in fillers { filler.close() } }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try client.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 0.5)
        let error = try #require(try await recorder.waitForDisconnect())
        #expect(error.code == .connectTimeout)
        #expect(error.message == "Attempt to connect to host timed out")
    }

    @Test func unresolvableNameReportsADNSError() async throws {
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        try client.connect(toHost: "no-such-host.invalid", onPort: 80, withTimeout: 10)
        let error = try #require(try await recorder.waitForDisconnect(timeout: .seconds(20)))
        #expect(error.code == .other)
        #expect(error.domain == .netDB)
        #expect(error.underlying is DNSLookupError)
    }

    @Test func badConfigurationAndParametersThrow() throws {
        let recorder = SocketRecorder()
        let noDelegate = GCDAsyncSocket()
        expectSocketError(.badConfig) { try noDelegate.connect(toHost: "127.0.0.1", onPort: 1) }
        let noQueue = GCDAsyncSocket(delegate: recorder)
        expectSocketError(.badConfig) { try noQueue.accept(onPort: 0) }
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        expectSocketError(.badParam) { try socket.connect(toHost: "", onPort: 1) }
        expectSocketError(.badParam) { try socket.connect(toAddress: Data([1, 2, 3])) }
        expectSocketError(.badParam) {
            try socket.connect(toHost: "127.0.0.1", onPort: 1, viaInterface: "nosuchif0", withTimeout: 1)
        }
        expectSocketError(.badParam) { try socket.accept(onInterface: "nosuchif0", port: 0) }
        socket.isIPv4Enabled = false
        socket.isIPv6Enabled = false
        expectSocketError(.badConfig) { try socket.connect(toHost: "127.0.0.1", onPort: 1) }
        #expect(socket.isDisconnected)
    }

    @Test func startingTwiceIsABadConfiguration() throws {
        let server = try EchoServer()
        defer { server.stop() }
        expectSocketError(.badConfig) { try server.socket.accept(onPort: 0) }
        expectSocketError(.badConfig) { try server.socket.connect(toHost: "127.0.0.1", onPort: 1) }
    }

    @Test func bindingAPortInUseThrowsAtOnce() throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = SocketRecorder()
        let second = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        let error = expectSocketError(.other) { try second.accept(onInterface: "127.0.0.1", port: server.port) }
        #expect(error?.posixErrorCode == .EADDRINUSE)
        #expect(second.isDisconnected)
    }

    @Test func aClosedSocketCanBeReused() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = SocketRecorder()
        let client = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        for round in 1...2 {
            try client.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
            client.write(Data("r\(round)"), withTimeout: 5, tag: round)
            client.readData(toLength: 2, withTimeout: 5, tag: round)
            try await recorder.wait { $0.contains(.read(Data("r\(round)"), tag: round)) }
            client.disconnect()
            try await recorder.wait { $0.disconnectCount == round }
        }
    }
}

extension RawPeer {
    /// Starts a connect without waiting for it (for filling a backlog).
    static func connectNonBlocking(port: UInt16) throws -> RawPeer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: Int(port))
        _ = address.withSockAddr { Glibc.connect(fd, $0, socklen_t($1)) }
        return RawPeer(fd: fd)
    }
}
