import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherSockets

/// The original's lifetime: the user's last reference going away closes the socket, its listeners and the sockets
/// it accepted that nobody kept, with no delegate call (the original passed a nil socket).
@Suite struct GCDAsyncSocketLifetimeTests {
    @Test func aReleasedSocketClosesItsConnectionWithoutACallback() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let recorder = SocketRecorder(label: "released")
        var socket: GCDAsyncSocket? = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
        weak let weakSocket = socket
        try socket?.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
        socket?.readData(toLength: 4, withTimeout: -1, tag: 1)
        socket?.readData(toLength: 4, withTimeout: -1, tag: 2)
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        peer.send("live")
        try await recorder.wait { $0.contains(.read(Data("live"), tag: 1)) }
        // The read of tag 2 is still queued: releasing drops it. The peer sees the end of the stream.
        socket = nil
        let rest = try await onThread { peer.receiveToEnd() }
        #expect(rest.isEmpty)
        try await OpenSockets.waitUntilClosed(port: Int(listener.port), ends: .clients)
        #expect(weakSocket == nil)
        #expect(recorder.disconnectErrors.isEmpty)
        #expect(recorder.violations.isEmpty)
    }

    @Test(arguments: [GCDAsyncSocket.CallbackDelivery.delegateQueue, .eventLoop])
    func aHundredSocketsDroppedWithoutDisconnectGiveBackTheirDescriptors(
        delivery: GCDAsyncSocket.CallbackDelivery
    ) async throws {
        let listener = try RawListener(backlog: 128)
        defer { listener.close() }
        let recorder = SocketRecorder(label: "hundred")
        recorder.checksQueue = delivery == .delegateQueue
        var sockets: [GCDAsyncSocket] = []
        for _ in 0..<100 {
            let socket = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
            socket.callbackDelivery = delivery
            try socket.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
            sockets.append(socket)
        }
        let peers = try await onThread { (0..<100).map { _ in listener.accept() } }
        defer { for peer in peers { peer.close() } }
        try await recorder.wait { $0.filter { if case .connected = $0 { true } else { false } }.count == 100 }
        sockets.removeAll()
        for peer in peers {
            let rest = try await onThread { peer.receiveToEnd() }
            #expect(rest.isEmpty)
        }
        try await OpenSockets.waitUntilClosed(port: Int(listener.port), ends: .clients)
        #expect(recorder.disconnectErrors.isEmpty)
    }

    @Test func aReleasedListenerStopsListening() async throws {
        let recorder = SocketRecorder(label: "listener")
        var port: UInt16 = 0
        weak var weakListener: GCDAsyncSocket?
        do {
            let listener = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue)
            weakListener = listener
            try listener.accept(onInterface: "127.0.0.1", port: 0)
            port = listener.localPort
        }
        #expect(weakListener == nil)
        let listenedPort = port
        // The listening channel closes on its loop; a connect is refused once it has.
        let refused = try await onThread { () -> Bool in
            for _ in 0..<500 {
                do {
                    let peer = try RawPeer.connect(port: listenedPort)
                    peer.close()
                } catch let error as POSIXError where error.code == .ECONNREFUSED {
                    return true
                }
                usleep(10_000)
            }
            return false
        }
        #expect(refused)
        #expect(recorder.disconnectErrors.isEmpty)
    }

    @Test(arguments: [GCDAsyncSocket.CallbackDelivery.delegateQueue, .eventLoop])
    func anAcceptedSocketTheDelegateDoesNotKeepCloses(delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        final class Forgetful: GCDAsyncSocketDelegate, @unchecked Sendable {
            let accepted = LockedBox(0)
            func socket(_ sock: GCDAsyncSocket, didAcceptNewSocket newSocket: GCDAsyncSocket) {
                accepted.withLock { $0 += 1 }
            }
        }
        let delegate = Forgetful()
        let listener = GCDAsyncSocket(delegate: delegate, delegateQueue: DispatchQueue(label: "forgetful"))
        listener.callbackDelivery = delivery
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        defer { listener.disconnect() }
        let client = try await onThread { try RawPeer.connect(port: listener.localPort) }
        defer { client.close() }
        let rest = try await onThread { client.receiveToEnd() }
        #expect(rest.isEmpty)
        #expect(delegate.accepted.withLock { $0 } == 1)
        try await OpenSockets.waitUntilClosed(port: Int(listener.localPort), ends: .accepted)
    }

    @Test func aHundredTCPConnectionsDroppedWithoutCloseGiveBackTheirDescriptors() async throws {
        let listener = try await TCPListener.bind(host: "127.0.0.1", port: 0)
        let port = listener.localPort
        var clients: [TCPConnection] = []
        var servers: [TCPConnection] = []
        var iterator = listener.connections.makeAsyncIterator()
        for _ in 0..<100 {
            clients.append(try await TCPConnection.connect(host: "127.0.0.1", port: port))
            servers.append(try #require(try await iterator.next()))
        }
        #expect(OpenSockets.connected(port: port) == 200)
        clients.removeAll()
        servers.removeAll()
        try await OpenSockets.waitUntilClosed(port: port)
        try await listener.close()
    }
}
