import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency
import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketClosingTests {
    @Test func disconnectDropsQueuedOperationsAndReportsOnceWithNoError() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(toLength: 100, withTimeout: 5, tag: 1)
        connection.socket.readData(toLength: 100, withTimeout: 5, tag: 2)
        connection.socket.disconnect()
        connection.socket.disconnect()
        let error = try await connection.recorder.waitForDisconnect()
        #expect(error == nil)
        #expect(connection.recorder.disconnectErrors.count == 1)
        #expect(connection.socket.isDisconnected)
        // The peer sees the close.
        let rest = try await onThread { connection.peer.receiveToEnd() }
        #expect(rest.isEmpty)
        #expect(connection.recorder.events.disconnectCount == 1)
    }

    @Test func operationsBeforeStartingAndAfterClosingAreDropped() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let recorder = SocketRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        socket.readData(toLength: 1, withTimeout: 5, tag: 1)
        socket.write(Data("early"), withTimeout: 5, tag: 2)
        try socket.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
        socket.write(Data("kept"), withTimeout: 5, tag: 3)
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        let received = try await onThread { peer.receive(count: 4) }
        #expect(received == Array("kept".utf8))
        try await recorder.wait { $0.contains(.wrote(tag: 3)) }
        #expect(!recorder.events.contains(.wrote(tag: 2)))
        socket.disconnect()
        socket.write(Data("late"), withTimeout: 5, tag: 4)
        socket.readData(withTimeout: 5, tag: 5)
        try await recorder.wait { $0.disconnectCount == 1 }
        #expect(recorder.events.count == 3)
    }

    @Test func disconnectAfterWritingFlushesWritesAndDropsReads() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(toLength: 10, withTimeout: 5, tag: 1)
        connection.socket.write(Data("bye"), withTimeout: 5, tag: 2)
        connection.socket.disconnectAfterWriting()
        connection.socket.write(Data("refused"), withTimeout: 5, tag: 3)
        let received = try await onThread { connection.peer.receiveToEnd() }
        #expect(received == Array("bye".utf8))
        let error = try await connection.recorder.waitForDisconnect()
        #expect(error == nil)
        #expect(connection.recorder.events.contains(.wrote(tag: 2)))
        #expect(!connection.recorder.events.contains(.wrote(tag: 3)))
        #expect(connection.recorder.reads().isEmpty)
    }

    @Test func disconnectAfterReadingWaitsForQueuedReads() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(toLength: 4, withTimeout: 5, tag: 1)
        connection.socket.disconnectAfterReading()
        #expect(connection.socket.isConnected)
        connection.socket.readData(toLength: 1, withTimeout: 5, tag: 2)
        connection.peer.send("data")
        let error = try await connection.recorder.waitForDisconnect()
        #expect(error == nil)
        #expect(connection.recorder.reads().map(\.1) == [1])
    }

    @Test func disconnectAfterReadingAndWritingWaitsForBoth() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        connection.socket.readData(toLength: 2, withTimeout: 5, tag: 1)
        connection.socket.write(Data("out"), withTimeout: 5, tag: 2)
        connection.socket.disconnectAfterReadingAndWriting()
        try await Task.sleep(for: .milliseconds(100))
        #expect(connection.recorder.events.disconnectCount == 0)
        connection.peer.send("in")
        let error = try await connection.recorder.waitForDisconnect()
        #expect(error == nil)
        #expect(connection.recorder.events.contains(.wrote(tag: 2)))
        #expect(connection.recorder.events.contains(.read(Data("in"), tag: 1)))
    }

    @Test func everyMethodWorksFromInsideCallbacks() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = SocketRecorder()
        let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        recorder.onConnect = { sock in
            sock.write(Data("one\n"), withTimeout: 5, tag: 1)
            sock.readData(to: Data("\n"), withTimeout: 5, tag: 1)
        }
        recorder.onRead = { sock, _, tag in
            _ = sock.connectedHost
            _ = sock.readProgress
            if tag < 5 {
                sock.write(Data("n\(tag + 1)\n"), withTimeout: 5, tag: tag + 1)
                sock.readData(to: Data("\n"), withTimeout: 5, tag: tag + 1)
            } else {
                sock.disconnect()
            }
        }
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        let error = try await recorder.waitForDisconnect()
        #expect(error == nil)
        #expect(recorder.reads().map(\.1) == [1, 2, 3, 4, 5])
        #expect(recorder.violations.isEmpty)
        #expect(recorder.events.last?.isDisconnect == true)
    }

    @Test func eventLoopDeliveryCallsTheDelegateOnTheLoopInOrder() async throws {
        let server = try EchoServer()
        defer { server.stop() }
        let recorder = SocketRecorder()
        recorder.checksQueue = false
        let onLoop = LockedBox<[Bool]>([])
        let socket = GCDAsyncSocket(delegate: recorder)
        socket.callbackDelivery = .eventLoop
        recorder.onConnect = { sock in
            onLoop.withLock { $0.append(MultiThreadedEventLoopGroup.currentEventLoop != nil) }
            sock.write(Data("ping\n"), withTimeout: 5, tag: 1)
            sock.readData(to: Data("\n"), withTimeout: 5, tag: 2)
        }
        recorder.onRead = { sock, _, _ in
            onLoop.withLock { $0.append(MultiThreadedEventLoopGroup.currentEventLoop != nil) }
            sock.disconnect()
        }
        try socket.connect(toHost: "127.0.0.1", onPort: server.port, withTimeout: 5)
        let error = try await recorder.waitForDisconnect()
        #expect(error == nil)
        #expect(onLoop.withLock { $0 } == [true, true])
        let names = recorder.events.map { "\($0)" }
        #expect(names.count == 4)
        #expect(recorder.events.last?.isDisconnect == true)
    }

    @Test func errorsBridgeToTheOriginalNSErrorDomain() {
        let error = GCDAsyncSocketError(code: .readTimeout, message: "Read operation timed out")
        let bridged = error as NSError
        #expect(bridged.domain == "GCDAsyncSocketErrorDomain")
        #expect(bridged.code == 4)
        #expect(bridged.localizedDescription == "Read operation timed out")
        #expect(GCDAsyncSocketError.Code.closed.rawValue == 7)
        #expect(GCDAsyncSocketError.Code.other.description == "other")
        do {
            throw error
        } catch GCDAsyncSocketError.Code.readTimeout {
        } catch {
            Issue.record("code pattern did not match")
        }
    }

    @Test func separatorConstantsAreTheOriginals() {
        #expect(GCDAsyncSocket.crlfData() == Data([0x0D, 0x0A]))
        #expect(GCDAsyncSocket.crData() == Data([0x0D]))
        #expect(GCDAsyncSocket.lfData() == Data([0x0A]))
        #expect(GCDAsyncSocket.zeroData() == Data([0x00]))
    }

    @Test func userDataIsKeptAndNeverUsed() {
        let socket = GCDAsyncSocket()
        #expect(socket.userData == nil)
        socket.userData = 42
        #expect(socket.userData as? Int == 42)
    }
}
