import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncUdpSocketClosingTests {
    /// Runs `body` while the socket's only event loop is blocked, so nothing queued can run before it returns.
    private func withBlockedLoop(
        _ body: (GCDAsyncUdpSocket, UdpRecorder) throws -> Void
    ) async throws -> (GCDAsyncUdpSocket, UdpRecorder, MultiThreadedEventLoopGroup) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorder = UdpRecorder(label: "closing")
        let socket = recorder.makeSocket(eventLoopGroup: group)
        let gate = DispatchSemaphore(value: 0)
        group.next().execute { gate.wait() }
        do {
            try body(socket, recorder)
        } catch {
            gate.signal()
            throw error
        }
        gate.signal()
        return (socket, recorder, group)
    }

    @Test("close drops queued sends without callbacks and reports a nil error")
    func closeDropsQueuedSends() async throws {
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let port = UInt16(peer.port)
        let (socket, recorder, group) = try await withBlockedLoop { socket, _ in
            try socket.bind(toPort: 0, interface: "127.0.0.1")
            for tag in 1...5 {
                socket.send(Data("queued \(tag)".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: tag)
            }
            socket.close()
        }
        try await recorder.wait { $0.contains(.closed(code: nil)) }
        #expect(socket.isClosed())
        // The instance is reusable: a new life sends, and its datagram is the first the peer sees.
        socket.send(Data("after".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 10)
        try await recorder.waitForSendResults([10])
        #expect(recorder.events == [.closed(code: nil), .sent(tag: 10)])
        try await peer.wait(for: 1)
        #expect(peer.payloads == [Data("after".utf8)])
        socket.close()
        await peer.stop()
        try await group.shutdownGracefully()
    }

    @Test("closeAfterSending sends every queued datagram, then closes")
    func closeAfterSendingDrainsTheQueue() async throws {
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let port = UInt16(peer.port)
        let (socket, recorder, group) = try await withBlockedLoop { socket, _ in
            try socket.bind(toPort: 0, interface: "127.0.0.1")
            for tag in 1...5 {
                socket.send(Data("queued \(tag)".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: tag)
            }
            socket.closeAfterSending()
        }
        try await recorder.wait { $0.contains(.closed(code: nil)) }
        #expect(recorder.events == (1...5).map { .sent(tag: $0) } + [.closed(code: nil)])
        #expect(socket.isClosed())
        try await peer.wait(for: 5)
        #expect(peer.payloads == (1...5).map { Data("queued \($0)".utf8) })
        await peer.stop()
        try await group.shutdownGracefully()
    }

    @Test("closeAfterSending with nothing queued closes at once; close of a fresh socket reports nothing")
    func closeAfterSendingWithAnEmptyQueue() async throws {
        let recorder = UdpRecorder(label: "empty")
        let fresh = recorder.makeSocket()
        fresh.close()
        fresh.closeAfterSending()
        let socket = recorder.makeSocket()
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        #expect(!socket.isClosed())
        socket.closeAfterSending()
        try await recorder.wait { $0.contains(.closed(code: nil)) }
        #expect(recorder.events == [.closed(code: nil)])
        // Operations after close are ignored or start a new life; a receive on a closed socket is a config error.
        #expect(throws: GCDAsyncUdpSocketError.self) { try socket.receiveOnce() }
    }
}
