import Foundation
import Testing
import TetherSockets
import TetherTestSupport

@Suite("AsyncSocket (RunLoop era): reads, writes, timeouts, progress and closes", .timeLimit(.minutes(1)))
struct AsyncSocketIOTests {
    @Test("a length read reports partial passes, then the bytes; a separator read includes it and loses nothing after")
    func lengthAndSeparatorReads() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(toLength: 6, withTimeout: 5, tag: 1)
        client.peer.send("abc")
        try await client.recorder.wait { $0.contains(.partialRead(3, tag: 1)) }
        client.peer.send("def\r\nrest")
        try await client.recorder.wait { $0.contains(.read(Data("abcdef".utf8), tag: 1)) }
        client.socket.readData(to: AsyncSocket.crlfData(), withTimeout: 5, tag: 2)
        try await client.recorder.wait { $0.contains(.read(Data("\r\n".utf8), tag: 2)) }
        client.socket.readData(toLength: 4, withTimeout: 5, tag: 3)
        try await client.recorder.wait { $0.contains(.read(Data("rest".utf8), tag: 3)) }
        #expect(client.recorder.violations.isEmpty)
    }

    @Test("an available read takes what is there, never sends a partial callback, and respects maxLength")
    func availableReads() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        let buffer = NSMutableData(data: Data("XY".utf8))
        client.peer.send("hello")
        client.socket.readData(toLength: 5, withTimeout: 5, tag: 0)
        try await client.recorder.wait { $0.contains(.read(Data("hello".utf8), tag: 0)) }
        client.peer.send("123456")
        client.socket.readData(withTimeout: 5, buffer: buffer, bufferOffset: 2, maxLength: 4, tag: 4)
        try await client.recorder.wait { $0.contains(.read(Data("1234".utf8), tag: 4)) }
        #expect(buffer as Data == Data("XY1234".utf8))
        client.socket.readData(withTimeout: 5, tag: 5)
        try await client.recorder.wait { $0.contains(.read(Data("56".utf8), tag: 5)) }
        #expect(!client.recorder.events.contains { if case .partialRead(_, 4) = $0 { true } else { false } })
    }

    @Test("invalid reads are ignored: no callback, nothing queued (canSafelySetDelegate stays true)")
    func invalidReadsAreIgnored() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(toLength: 0, withTimeout: 5, tag: 1)
        client.socket.readData(to: Data(), withTimeout: 5, tag: 2)
        client.socket.readData(to: Data("\r\n".utf8), withTimeout: 5, maxLength: 1, tag: 3)
        client.socket.readData(withTimeout: 5, buffer: NSMutableData(length: 2), bufferOffset: 3, tag: 4)
        client.socket.write(Data(), withTimeout: 5, tag: 5)
        #expect(client.socket.canSafelySetDelegate())
        // A valid read queued after them is the first to complete.
        client.socket.readData(toLength: 1, withTimeout: 5, tag: 6)
        #expect(!client.socket.canSafelySetDelegate())
        client.peer.send("z")
        let events = try await client.recorder.wait { $0.contains(.read(Data("z".utf8), tag: 6)) }
        #expect(events.filter { if case .read = $0 { true } else { false } }.count == 1)
        #expect(client.socket.canSafelySetDelegate())
    }

    @Test("a separator read past maxLength: partial progress, then willDisconnect code 3, then didDisconnect")
    func readMaxedOut() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(to: AsyncSocket.crlfData(), withTimeout: 5, maxLength: 4, tag: 1)
        client.peer.send("abcdef")
        let events = try await client.recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: AsyncSocketErrorDomain, code: 3), .disconnected])
        #expect(!client.socket.isConnected())
    }

    @Test("writes complete in order; progress is NaN when idle with the out-parameters zeroed")
    func writesAndProgress() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        var tag = 99
        var done: UInt = 99
        var total: UInt = 99
        #expect(client.socket.progressOfWrite(returningTag: &tag, bytesDone: &done, total: &total).isNaN)
        #expect(tag == 0 && done == 0 && total == 0)
        #expect(client.socket.progressOfRead(returningTag: nil, bytesDone: nil, total: nil).isNaN)
        client.socket.write(Data("one".utf8), withTimeout: 5, tag: 1)
        client.socket.write(Data("two".utf8), withTimeout: 5, tag: 2)
        try await client.recorder.wait { $0.contains(.wrote(tag: 2)) }
        #expect(
            client.recorder.events.filter { if case .wrote = $0 { true } else { false } } == [
                .wrote(tag: 1), .wrote(tag: 2),
            ]
        )
        #expect(try await onThread { client.peer.receive(count: 6) } == Array("onetwo".utf8))
        // A length read in progress reports done/total.
        client.socket.readData(toLength: 4, withTimeout: 5, tag: 7)
        client.peer.send("ab")
        try await client.recorder.wait { $0.contains(.partialRead(2, tag: 7)) }
        let fraction = client.socket.progressOfRead(returningTag: &tag, bytesDone: &done, total: &total)
        #expect(fraction == 0.5 && tag == 7 && done == 2 && total == 4)
    }

    @Test("a large write reports partial progress, then completes; the peer gets every byte")
    func partialWrites() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        let payload = Data((0..<3_000_000).map { UInt8($0 & 0xFF) })
        client.socket.write(payload, withTimeout: 10, tag: 5)
        let received = try await onThread { client.peer.receive(count: payload.count) }
        #expect(sameElements(Data(received), payload))
        let events = try await client.recorder.wait { $0.contains(.wrote(tag: 5)) }
        let partial = events.compactMap { if case .partialWrite(let n, 5) = $0 { n } else { nil } }
        #expect(!partial.isEmpty)
        #expect(client.socket.progressOfWrite(returningTag: nil, bytesDone: nil, total: nil).isNaN)
    }

    @Test("a write timeout: shouldTimeoutWrite may extend; unextended → code 5, then didDisconnect")
    func writeTimeout() async throws {
        let client = try await RunLoopClient.connect { $0.timeoutExtensions = [0.2] }
        defer { client.close() }
        client.peer.shrinkReceiveBuffer()
        client.socket.write(Data(repeating: 7, count: 64 * 1024 * 1024), withTimeout: 0.5, tag: 3)
        let events = try await client.recorder.waitForDisconnect()
        let asked = events.compactMap { event -> TimeInterval? in
            if case .writeTimeoutAsked(3, let elapsed, _) = event { elapsed } else { nil }
        }
        #expect(asked.count == 2)
        if asked.count == 2 { #expect(abs(asked[1] - 0.7) < 0.01) }
        #expect(events.suffix(2) == [.willDisconnect(domain: AsyncSocketErrorDomain, code: 5), .disconnected])
        #expect(!events.contains(.wrote(tag: 3)))
    }

    @Test("a read timeout: shouldTimeout may extend (elapsed adds up); unextended → code 4 with the unread bytes")
    func readTimeoutWithExtension() async throws {
        let client = try await RunLoopClient.connect { $0.timeoutExtensions = [0.2] }
        defer { client.close() }
        // The bytes are buffered before the timed read starts (a first read takes "p" of the one segment), so its
        // timer cannot fire before they count.
        client.peer.send("part")
        client.socket.readData(toLength: 1, withTimeout: 5, tag: 2)
        try await client.recorder.wait { $0.contains(.read(Data("p".utf8), tag: 2)) }
        client.socket.readData(toLength: 10, withTimeout: 0.2, tag: 3)
        let events = try await client.recorder.waitForDisconnect()
        let asked = events.compactMap { event -> TimeInterval? in
            if case .readTimeoutAsked(3, let elapsed, 3) = event { elapsed } else { nil }
        }
        #expect(asked.count == 2)
        if asked.count == 2 { #expect(abs(asked[1] - 0.4) < 0.01) }
        #expect(events.suffix(2) == [.willDisconnect(domain: AsyncSocketErrorDomain, code: 4), .disconnected])
        #expect(client.recorder.unreadSeen == [Data("art".utf8)])
    }

    @Test("the peer's clean close: willDisconnect(nil) with unreadData holding what was not read, then didDisconnect")
    func peerCloseGivesUnreadData() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(toLength: 100, withTimeout: -1, tag: 1)
        client.peer.send("leftover")
        client.peer.shutdownWrite()
        let events = try await client.recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.willDisconnect(domain: nil, code: nil), .disconnected])
        #expect(client.recorder.unreadSeen == [Data("leftover".utf8)])
        #expect(client.socket.unreadData() == nil)
        #expect(!events.contains { if case .read = $0 { true } else { false } })
    }

    @Test(
        "a local disconnect on the run loop: didDisconnect before it returns, no willDisconnect, queued reads dropped"
    )
    func localDisconnectIsSynchronous() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        let socket = client.socket
        socket.readData(toLength: 10, withTimeout: -1, tag: 1)
        let sawDisconnectBeforeReturn = try await client.home.sync { () -> Bool in
            socket.disconnect()
            return client.recorder.events.last == .disconnected
        }
        #expect(sawDisconnectBeforeReturn)
        #expect(!client.recorder.events.contains { if case .willDisconnect = $0 { true } else { false } })
        #expect(client.socket.canSafelySetDelegate())
        #expect(try await onThread { client.peer.receiveToEnd() }.isEmpty)
        // Exactly one didDisconnect: a second disconnect does nothing.
        socket.disconnect()
        #expect(client.recorder.events.filter { $0 == .disconnected }.count == 1)
    }

    @Test(
        "disconnectAfterWriting: the pending writes complete, then didDisconnect alone; later reads and writes ignored"
    )
    func disconnectAfterWriting() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(toLength: 10, withTimeout: -1, tag: 8)
        client.socket.write(Data("bye".utf8), withTimeout: 5, tag: 1)
        client.socket.disconnectAfterWriting()
        client.socket.write(Data("ignored".utf8), withTimeout: 5, tag: 2)
        let events = try await client.recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.wrote(tag: 1), .disconnected])
        #expect(try await onThread { client.peer.receiveToEnd() } == Array("bye".utf8))
    }

    @Test("disconnect from another thread: didDisconnect comes on the run loop, once, and nothing after it")
    func disconnectOffTheRunLoop() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(toLength: 10, withTimeout: -1, tag: 1)
        client.socket.disconnect()
        try await client.recorder.waitForDisconnect()
        client.peer.send("late")
        client.socket.disconnect()
        // A later callback, had one been posted, would come before this block on the same run loop.
        let recorder = client.recorder
        let events = try await client.home.sync { recorder.events }
        #expect(events.filter { $0 == .disconnected }.count == 1)
        #expect(!events.contains { if case .willDisconnect = $0 { true } else { false } })
        #expect(!events.contains { if case .read = $0 { true } else { false } })
        #expect(client.recorder.violations.isEmpty)
    }

    @Test("disconnectAfterReading: the pending read completes, then didDisconnect alone; later writes are ignored")
    func disconnectAfterReading() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        client.socket.readData(toLength: 3, withTimeout: -1, tag: 1)
        client.socket.disconnectAfterReading()
        client.socket.write(Data("ignored".utf8), withTimeout: 5, tag: 2)
        client.socket.readData(toLength: 1, withTimeout: 5, tag: 3)
        client.peer.send("abc")
        let events = try await client.recorder.waitForDisconnect()
        #expect(events.suffix(2) == [.read(Data("abc".utf8), tag: 1), .disconnected])
        #expect(try await onThread { client.peer.receiveToEnd() }.isEmpty)
    }

    @Test("reads and writes queued before connect are discarded; those queued after it run once connected")
    func onlyRequestsAfterConnectRun() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = RunLoopSocketRecorder()
        let socket = AsyncSocket(delegate: recorder)
        socket.write(Data("before".utf8), withTimeout: 5, tag: 1)
        socket.readData(toLength: 1, withTimeout: 5, tag: 2)
        let port = listener.port
        try await home.sync {
            try socket.connect(toHost: "127.0.0.1", onPort: port, withTimeout: 5)
            socket.write(Data("after".utf8), withTimeout: 5, tag: 3)
        }
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        try await recorder.wait { $0.contains(.wrote(tag: 3)) }
        #expect(try await onThread { peer.receive(count: 5) } == Array("after".utf8))
        #expect(!recorder.events.contains(.wrote(tag: 1)))
        socket.disconnect()
    }

    @Test("callbacks wait while the run loop runs in another mode, and arrive once it runs in the socket's mode")
    func callbacksOnlyInTheSocketsModes() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        let other = RunLoop.Mode("AsyncSocketTestOtherMode")
        // A probe socket, connected on a run loop of its own, then moved to the client's run loop in the other mode:
        // its callbacks show when the client's thread runs in that mode.
        let probeHome = RunLoopThread(name: "probe")
        defer { probeHome.stop() }
        let probe = RunLoopSocketRecorder()
        let probeSocket = AsyncSocket(delegate: probe)
        let listener = try RawListener()
        defer { listener.close() }
        let port = listener.port
        try await probeHome.sync { try probeSocket.connect(toHost: "127.0.0.1", onPort: port) }
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        try await probe.wait { $0.contains { if case .connected = $0 { true } else { false } } }
        #expect(probeSocket.setRunLoopModes([other]))
        let target = client.home
        #expect(try await probeHome.sync { probeSocket.moveToRunLoop(target.runLoop) })
        client.home.mode = other
        probeSocket.readData(toLength: 1, withTimeout: -1, tag: 1)
        peer.send("x")
        try await probe.wait { $0.contains(.read(Data("x".utf8), tag: 1)) }
        // The client's thread now runs in the other mode: the client's read waits while the probe's next one runs.
        client.socket.readData(toLength: 2, withTimeout: -1, tag: 1)
        client.peer.send("hi")
        probeSocket.readData(toLength: 1, withTimeout: -1, tag: 2)
        peer.send("y")
        try await probe.wait { $0.contains(.read(Data("y".utf8), tag: 2)) }
        #expect(!client.recorder.events.contains(.read(Data("hi".utf8), tag: 1)))
        client.home.mode = .default
        try await client.recorder.wait { $0.contains(.read(Data("hi".utf8), tag: 1)) }
        probeSocket.disconnect()
    }

    @Test("run-loop settings: modes default to [.default]; empty or last-mode removal refused; move off-thread refused")
    func runLoopSettings() async throws {
        let client = try await RunLoopClient.connect()
        defer { client.close() }
        #expect(client.socket.runLoopModes() == [.default])
        #expect(!client.socket.setRunLoopModes([]))
        #expect(!client.socket.removeRunLoopMode(.default))
        #expect(client.socket.addRunLoopMode(.common))
        #expect(client.socket.runLoopModes() == [.default, .common])
        #expect(client.socket.removeRunLoopMode(.default))
        #expect(client.socket.runLoopModes() == [.common])
        let other = RunLoopThread()
        defer { other.stop() }
        let socket = client.socket
        // Off the socket's run loop thread: refused.
        #expect(try await other.sync { !socket.moveToRunLoop(RunLoop.current) })
        #expect(try await client.home.sync { socket.moveToRunLoop(other.runLoop) })
        client.recorder.expectedRunLoop = other.runLoop
        client.socket.readData(toLength: 1, withTimeout: -1, tag: 2)
        client.peer.send("m")
        try await client.recorder.wait { $0.contains(.read(Data("m".utf8), tag: 2)) }
        #expect(client.recorder.violations.isEmpty)
        client.socket.enablePreBuffering()
        #expect(client.socket.getCFSocket() == nil)
        #expect(client.socket.getCFReadStream() == nil && client.socket.getCFWriteStream() == nil)
        #expect(AsyncSocket.zeroData() == Data([0]) && AsyncSocket.lfData() == Data([0x0A]))
        #expect(AsyncSocket.crData() == Data([0x0D]))
    }
}
