import Foundation
import Testing
import TetherConcurrency

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The RunLoop-era receive model (as the original's AsyncUdpSocket), over loopback, with the socket's run loop on its own thread.
@Suite(.timeLimit(.minutes(1)))
struct AsyncUdpSocketReceivingTests {
    @Test("receive requests are served one at a time, in the order they were made")
    func requestsAreServedInOrder() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        for tag in 1...3 { socket.receive(withTimeout: -1, tag: tag) }
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("a", "b", "c", to: socket.localPort())
        let events = try await recorder.wait { $0.count == 3 }
        #expect(
            events == [
                .received(Data("a".utf8), tag: 1, accepted: true), .received(Data("b".utf8), tag: 2, accepted: true),
                .received(Data("c".utf8), tag: 3, accepted: true),
            ]
        )
        #expect(recorder.receivedFrom.allSatisfy { $0.host == "127.0.0.1" && $0.port == sender.port })
        #expect(recorder.allRan(on: home.runLoop))
        socket.close()
        await sender.close()
    }

    @Test(
        "a receive timeout of any value is accepted: infinite, NaN and too large wait without a timer",
        arguments: [TimeInterval.infinity, .nan, 1e300, 9.3e9, -.infinity]
    )
    func receiveTimeoutsOfAnyValueWait(timeout: TimeInterval) async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        socket.receive(withTimeout: timeout, tag: 1)
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("late", to: socket.localPort())
        let events = try await recorder.wait { $0.count == 1 }
        #expect(events == [.received(Data("late".utf8), tag: 1, accepted: true)])
    }

    @Test("with no active request nothing is read: the datagram waits in the kernel until a request comes")
    func nothingIsReadWithoutARequest() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("waiting", to: socket.localPort())
        // Over loopback the datagram is in the receiving socket's kernel queue once the send returned.
        let fd = try #require(socket.core.state.withLock { $0.sockets?.fd4 })
        #expect(Self.bytesWaiting(fd) == "waiting".utf8.count)
        #expect(recorder.events.isEmpty)

        socket.receive(withTimeout: -1, tag: 7)
        try await recorder.wait(for: .received(Data("waiting".utf8), tag: 7, accepted: true))
        #expect(Self.bytesWaiting(fd) == 0)
        socket.close()
        await sender.close()
    }

    @Test("a delegate that returns false discards the datagram and the same request takes the next one")
    func refusingKeepsTheRequestActive() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        recorder.accepts { $0 == Data("yes".utf8) }
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        socket.receive(withTimeout: 30, tag: 1)
        socket.receive(withTimeout: 30, tag: 2)
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("no", "nope", "yes", "yes", to: socket.localPort())
        let events = try await recorder.wait { $0.count == 4 }
        #expect(
            events == [
                .received(Data("no".utf8), tag: 1, accepted: false),
                .received(Data("nope".utf8), tag: 1, accepted: false),
                .received(Data("yes".utf8), tag: 1, accepted: true),
                .received(Data("yes".utf8), tag: 2, accepted: true),
            ]
        )
        socket.close()
        await sender.close()
    }

    @Test("a request that refused datagrams still times out (its timer keeps running), then the next is active")
    func aRefusingRequestStillTimesOut() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        recorder.accepts { $0 != Data("no".utf8) }
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        // The refused datagram waits in the kernel before the request exists, so that the request meets it at once.
        // The refusal still makes a round trip to the run loop (the delegate is asked there) before the 2 s timer
        // that it must precede: in a loaded parallel run, 0.5 s was not always enough for that round trip.
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("no", to: socket.localPort())
        socket.receive(withTimeout: 2, tag: 1)
        socket.receive(withTimeout: -1, tag: 2)
        try await recorder.wait(for: .notReceived(tag: 1, code: 5))
        try await sender.send("taken", to: socket.localPort())
        let events = try await recorder.wait(for: .received(Data("taken".utf8), tag: 2, accepted: true))
        #expect(events.first == .received(Data("no".utf8), tag: 1, accepted: false))
        #expect(!socket.isClosed())
        socket.close()
        await sender.close()
    }

    /// Implements nothing but the timeout callback: `didReceive` is the protocol's default.
    final class TimeoutsOnly: AsyncUdpSocketDelegate {
        var timedOut: [Int] = []
        var continuation: CheckedContinuation<Void, Never>?

        func onUdpSocket(_ sock: AsyncUdpSocket, didNotReceiveDataWithTag tag: Int, dueToError error: (any Error)?) {
            timedOut.append(tag)
            continuation?.resume()
            continuation = nil
        }
    }

    @Test("a delegate without didReceive takes every datagram (the default returns true)")
    func anUnimplementedDidReceiveTakesTheDatagram() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let delegate = TimeoutsOnly()
        let socket = try await home.sync { AsyncUdpSocket(delegate: delegate) }
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        let sender = try await AsyncUdpTestSender.make()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            // Set on the run loop before any callback can run there (a block added now fires before them).
            home.perform { delegate.continuation = done }
            // Request 1 takes the datagram, so request 2 becomes active and times out; had request 1 refused it,
            // request 2 would never become active.
            socket.receive(withTimeout: -1, tag: 1)
            socket.receive(withTimeout: 0.1, tag: 2)
            Task { try await sender.send("taken", to: socket.localPort()) }
        }
        #expect(try await home.sync { delegate.timedOut } == [2])
        socket.close()
        await sender.close()
    }

    @Test(
        "a timeout reports code 5 in AsyncUdpSocketErrorDomain, the next request becomes active, the socket stays open"
    )
    func aTimeoutMovesToTheNextRequest() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let errors = ErrorBox()
        let socket = try await home.sync { AsyncUdpSocket(delegate: errors) }
        errors.forward = recorder
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        socket.receive(withTimeout: 0.1, tag: 1)
        socket.receive(withTimeout: -1, tag: 2)
        try await recorder.wait(for: .notReceived(tag: 1, code: 5))
        let error = try #require(errors.last as NSError?)
        #expect(error.domain == AsyncUdpSocketErrorDomain)
        #expect(error.code == AsyncUdpSocketError.Code.receiveTimeoutError.rawValue)
        #expect(error.localizedDescription == "Receive operation timed out")
        #expect(!socket.isClosed())
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("for two", to: socket.localPort())
        try await recorder.wait(for: .received(Data("for two".utf8), tag: 2, accepted: true))
        socket.close()
        await sender.close()
    }

    @Test("datagrams longer than maxReceiveBufferSize (default 9,216) are truncated; empty ones are delivered")
    func truncationAndEmptyDatagrams() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        #expect(socket.maxReceiveBufferSize() == 9_216)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        let sender = try await AsyncUdpTestSender.make()
        let big = udpPattern(10_000)
        for tag in 1...2 { socket.receive(withTimeout: -1, tag: tag) }
        try await sender.send([big, Data()], to: socket.localPort())
        try await recorder.wait { $0.count == 2 }
        #expect(recorder.receivedData == [big.prefix(9_216), Data()])

        socket.setMaxReceiveBufferSize(100)
        #expect(socket.maxReceiveBufferSize() == 100)
        socket.receive(withTimeout: -1, tag: 3)
        try await sender.send([udpPattern(500)], to: socket.localPort())
        try await recorder.wait { $0.count == 3 }
        #expect(recorder.receivedData.last == udpPattern(100))
        socket.close()
        await sender.close()
    }

    @Test("after connect, datagrams from other peers are skipped silently")
    func aConnectedSocketSkipsOtherPeers() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await AsyncUdpTestSender.make()
        let stranger = try await AsyncUdpTestSender.make()
        try socket.connect(toHost: "127.0.0.1", onPort: peer.port)
        socket.receive(withTimeout: -1, tag: 1)
        socket.receive(withTimeout: -1, tag: 2)
        try await stranger.send("from a stranger", to: socket.localPort())
        try await peer.send("from the peer", to: socket.localPort())
        try await stranger.send("again a stranger", to: socket.localPort())
        try await peer.send("the peer again", to: socket.localPort())
        let events = try await recorder.wait { $0.count == 2 }
        #expect(recorder.receivedData == [Data("from the peer".utf8), Data("the peer again".utf8)])
        #expect(events.count == 2)
        #expect(recorder.receivedFrom.allSatisfy { $0.port == peer.port })
        socket.close()
        await peer.close()
        await stranger.close()
    }

    @Test("a receive on a socket that has no port yet can only time out; after a bind the next request receives")
    func aReceiveBeforeBindOnlyTimesOut() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        socket.receive(withTimeout: 0.1, tag: 1)
        try await recorder.wait(for: .notReceived(tag: 1, code: 5))
        socket.receive(withTimeout: -1, tag: 2)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("after bind", to: socket.localPort())
        try await recorder.wait(for: .received(Data("after bind".utf8), tag: 2, accepted: true))
        socket.close()
        await sender.close()
    }

    static func bytesWaiting(_ fd: Int32) -> Int {
        var count: Int32 = 0
        _ = ioctl(fd, UInt(FIONREAD), &count)
        return Int(count)
    }
}

/// Keeps the last error a delegate saw and forwards every callback to a recorder.
final class ErrorBox: AsyncUdpSocketDelegate {
    var forward: AsyncUdpRecorder?
    var last: (any Error)?

    func onUdpSocket(_ sock: AsyncUdpSocket, didSendDataWithTag tag: Int) {
        forward?.onUdpSocket(sock, didSendDataWithTag: tag)
    }

    func onUdpSocket(_ sock: AsyncUdpSocket, didNotSendDataWithTag tag: Int, dueToError error: (any Error)?) {
        last = error
        forward?.onUdpSocket(sock, didNotSendDataWithTag: tag, dueToError: error)
    }

    func onUdpSocket(
        _ sock: AsyncUdpSocket,
        didReceive data: Data,
        withTag tag: Int,
        fromHost host: String,
        port: UInt16
    ) -> Bool {
        forward?.onUdpSocket(sock, didReceive: data, withTag: tag, fromHost: host, port: port) ?? true
    }

    func onUdpSocket(_ sock: AsyncUdpSocket, didNotReceiveDataWithTag tag: Int, dueToError error: (any Error)?) {
        last = error
        forward?.onUdpSocket(sock, didNotReceiveDataWithTag: tag, dueToError: error)
    }

    func onUdpSocketDidClose(_ sock: AsyncUdpSocket) {
        forward?.onUdpSocketDidClose(sock)
    }
}

// Sendable: only the socket's run loop touches it, and the test reads it after awaiting the continuation it resumes.
extension AsyncUdpSocketReceivingTests.TimeoutsOnly: @unchecked Sendable {}

// Sendable: `forward` is set before the socket is used; `last` is written on the run loop and read after the test
// awaited the callback that wrote it.
extension ErrorBox: @unchecked Sendable {}
