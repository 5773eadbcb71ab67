import Foundation
import NIOCore
import Testing

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// RunLoop-era sends (as the original's AsyncUdpSocket): Bool results, one current send, results on the run loop,
/// errors that never close.
@Suite(.timeLimit(.minutes(1)))
struct AsyncUdpSocketSendingTests {
    @Test("sends are reported in order with didSendDataWithTag, on the socket's run loop, and arrive")
    func sendsAreReportedInOrder() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        for tag in 1...3 {
            #expect(
                socket.send(
                    Data("d\(tag)".utf8),
                    toHost: "127.0.0.1",
                    port: UInt16(peer.port),
                    withTimeout: 5,
                    tag: tag
                )
            )
        }
        let events = try await recorder.wait { $0.count == 3 }
        #expect(events == [.sent(tag: 1), .sent(tag: 2), .sent(tag: 3)])
        #expect(recorder.allRan(on: home.runLoop))
        try await peer.wait(for: 3)
        #expect(peer.payloads == [Data("d1".utf8), Data("d2".utf8), Data("d3".utf8)])
        socket.close()
        await peer.stop()
    }

    @Test("send returns false for empty data, without a destination when unconnected, and for bad addresses")
    func sendsRefusedOnAnUnconnectedSocket() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let port = UInt16(peer.port)
        #expect(!socket.send(Data(), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 1))
        #expect(!socket.send(Data("x".utf8), withTimeout: 5, tag: 2))
        #expect(!socket.send(Data("x".utf8), toAddress: Data([1, 2, 3]), withTimeout: 5, tag: 3))
        #expect(!socket.send(Data("x".utf8), toHost: "", port: port, withTimeout: 5, tag: 4))
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: peer.port).sockaddrData
        #expect(address.count == 16)
        #expect(socket.send(Data("by address".utf8), toAddress: address, withTimeout: 5, tag: 5))
        // Only the accepted send is reported.
        #expect(try await recorder.wait { !$0.isEmpty } == [.sent(tag: 5)])
        try await peer.wait(for: 1)
        #expect(peer.payloads == [Data("by address".utf8)])
        socket.close()
        await peer.stop()
    }

    @Test("a connected socket sends without a destination and refuses toHost and toAddress sends")
    func aConnectedSocketRefusesDestinations() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        try socket.connect(toHost: "127.0.0.1", onPort: UInt16(peer.port))
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: peer.port).sockaddrData
        #expect(!socket.send(Data("x".utf8), toHost: "127.0.0.1", port: UInt16(peer.port), withTimeout: 5, tag: 1))
        #expect(!socket.send(Data("x".utf8), toAddress: address, withTimeout: 5, tag: 2))
        #expect(!socket.send(Data(), withTimeout: 5, tag: 3))
        #expect(socket.send(Data("connected".utf8), withTimeout: 5, tag: 4))
        #expect(try await recorder.wait { !$0.isEmpty } == [.sent(tag: 4)])
        try await peer.wait(for: 1)
        #expect(peer.payloads == [Data("connected".utf8)])
        socket.close()
        await peer.stop()
    }

    @Test("send returns false after close and after a closeAfter…")
    func sendsRefusedWhenClosedOrClosing() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let port = UInt16(peer.port)
        let closed = try await makeAsyncUdpSocket(on: home, nil)
        closed.close()
        #expect(!closed.send(Data("x".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 1))
        let closers: [@Sendable (AsyncUdpSocket) -> Void] = [
            { $0.closeAfterSending() }, { $0.closeAfterReceiving() }, { $0.closeAfterSendingAndReceiving() },
        ]
        for close in closers {
            let socket = try await makeAsyncUdpSocket(on: home, nil)
            // Made and used on the run loop's thread: the deferred close cannot run before the send is tried.
            let refused = try await home.sync {
                close(socket)
                return !socket.send(Data("x".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 1)
            }
            #expect(refused)
        }
        await peer.stop()
    }

    @Test("a send the kernel refuses (EMSGSIZE) fails alone with NSPOSIXErrorDomain; the socket stays open")
    func aSendErrorDoesNotClose() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let port = UInt16(peer.port)
        #expect(socket.send(udpPattern(70_000), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 1))
        #expect(socket.send(Data("after".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 2))
        let events = try await recorder.wait { $0.count == 2 }
        #expect(events == [.notSent(tag: 1, domain: NSPOSIXErrorDomain, code: Int(EMSGSIZE)), .sent(tag: 2)])
        #expect(!socket.isClosed())
        try await peer.wait(for: 1)
        #expect(peer.payloads == [Data("after".utf8)])
        socket.close()
        try await recorder.wait(for: .closed)
        #expect(recorder.events.filter { $0 == .closed }.count == 1)
        await peer.stop()
    }

    @Test("the engine's send timeout reaches the delegate as code 4 (sendTimeoutError) in AsyncUdpSocketErrorDomain")
    func aSendTimeoutIsCode4() async throws {
        // A send the kernel holds past its timeout needs a throttled interface (see UDPNamespaceTests); here the
        // engine's timeout is handed to the adapter as the engine reports it.
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        socket.bridge.udpSocket(socket.core, didNotSendDataWithTag: 9, dueToError: GCDAsyncUdpSocketError.sendTimeout)
        let events = try await recorder.wait { !$0.isEmpty }
        #expect(events == [.notSent(tag: 9, domain: AsyncUdpSocketErrorDomain, code: 4)])
        #expect(!socket.isClosed())
    }
}
