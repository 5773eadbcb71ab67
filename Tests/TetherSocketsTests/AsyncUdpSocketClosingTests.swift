import Foundation
import Testing

@testable import TetherSockets

/// RunLoop-era close (as the original's AsyncUdpSocket).
@Suite(.timeLimit(.minutes(1)))
struct AsyncUdpSocketClosingTests {
    @Test("close: isClosed at once, queued work dropped silently, DidClose on a later pass of the run loop")
    func closeIsImmediateAndDidCloseComesLater() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        // On the run loop, as the original requires: nothing can be delivered until this block returns.
        let (closedAtOnce, seenInside) = try await home.sync { () -> (Bool, [AsyncUdpEvent]) in
            socket.receive(withTimeout: -1, tag: 1)
            socket.receive(withTimeout: 0.05, tag: 2)
            _ = socket.send(Data("queued".utf8), toHost: "127.0.0.1", port: UInt16(peer.port), withTimeout: 5, tag: 3)
            socket.close()
            return (socket.isClosed(), recorder.events)
        }
        #expect(closedAtOnce)
        #expect(seenInside.isEmpty)
        try await recorder.wait(for: .closed)
        // A pass after the one that delivered DidClose: nothing else was delivered.
        try await home.sync {}
        #expect(recorder.events == [.closed])
        #expect(recorder.allRan(on: home.runLoop))
        await peer.stop()
    }

    @Test("a second close posts no second DidClose")
    func aSecondCloseIsANoOp() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toPort: 0)
        try await home.sync {
            socket.close()
            socket.close()
            socket.closeAfterSending()
        }
        try await recorder.wait(for: .closed)
        try await home.sync {}
        #expect(recorder.events == [.closed])
    }

    @Test("closeAfterSending delivers every pending didSend first, then DidClose")
    func closeAfterSendingDrainsTheSends() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let port = UInt16(peer.port)
        let (accepted, refused, closedAtOnce) = try await home.sync { () -> (Bool, Bool, Bool) in
            var accepted = true
            for tag in 1...3 {
                accepted =
                    accepted
                    && socket.send(Data("s\(tag)".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: tag)
            }
            socket.closeAfterSending()
            socket.receive(withTimeout: 0.01, tag: 9)
            let refused = !socket.send(Data("late".utf8), toHost: "127.0.0.1", port: port, withTimeout: 5, tag: 4)
            return (accepted, refused, socket.isClosed())
        }
        #expect(accepted && refused && !closedAtOnce)
        let events = try await recorder.wait(for: .closed)
        #expect(events == [.sent(tag: 1), .sent(tag: 2), .sent(tag: 3), .closed])
        #expect(socket.isClosed())
        try await peer.wait(for: 3)
        await peer.stop()
    }

    @Test("closeAfterReceiving closes once the queued receive requests are done")
    func closeAfterReceivingDrainsTheReceives() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        try await home.sync {
            socket.receive(withTimeout: -1, tag: 1)
            socket.receive(withTimeout: 0.05, tag: 2)
            socket.closeAfterReceiving()
            socket.receive(withTimeout: -1, tag: 3)  // ignored
        }
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("one", to: socket.localPort())
        let events = try await recorder.wait(for: .closed)
        #expect(
            events == [.received(Data("one".utf8), tag: 1, accepted: true), .notReceived(tag: 2, code: 5), .closed]
        )
        await sender.close()
    }

    @Test("closeAfterSendingAndReceiving waits for both queues")
    func closeAfterSendingAndReceivingWaitsForBoth() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        try await home.sync {
            _ = socket.send(Data("s".utf8), toHost: "127.0.0.1", port: UInt16(peer.port), withTimeout: 5, tag: 1)
            socket.receive(withTimeout: 0.05, tag: 2)
            socket.closeAfterSendingAndReceiving()
        }
        let events = try await recorder.wait(for: .closed)
        #expect(Set(events.dropLast().map(\.description)) == ["sent(1)", "notReceived(2, 5)"])
        #expect(events.last == .closed)
        await peer.stop()
    }

    @Test("a closeAfter… with nothing queued closes on a later pass, not inside the call")
    func closeAfterWithNothingQueuedIsDeferred() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        let closedInside = try await home.sync {
            socket.closeAfterSending()
            return socket.isClosed()
        }
        #expect(!closedInside)
        try await recorder.wait(for: .closed)
        #expect(socket.isClosed())
    }

    @Test("a delegate that closes inside didReceive and returns false just stops")
    func closingInsideDidReceive() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        recorder.accepts { _ in false }
        recorder.onEvent { sock, event in
            if case .received = event { sock.close() }
        }
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        socket.receive(withTimeout: -1, tag: 1)
        let sender = try await AsyncUdpTestSender.make()
        try await sender.send("first", "second", to: socket.localPort())
        let events = try await recorder.wait(for: .closed)
        #expect(events == [.received(Data("first".utf8), tag: 1, accepted: false), .closed])
        await sender.close()
    }

    @Test("deinitialization delivers nothing")
    func deinitDeliversNothing() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        // Made, used and dropped inside one block on the run loop's thread (a value returned from `sync` would be
        // kept by the block's timer).
        let gone = try await home.sync { () -> WeakSocket in
            let socket = AsyncUdpSocket(delegate: recorder)
            try socket.bind(toAddress: "127.0.0.1", port: 0)
            socket.receive(withTimeout: 0.01, tag: 1)
            return WeakSocket(socket)
        }
        #expect(gone.socket == nil)
        // Another socket's DidClose on the same run loop: the first one's DidClose, had it been posted, came before.
        let witness = AsyncUdpRecorder()
        let other = try await makeAsyncUdpSocket(on: home, witness)
        other.close()
        try await witness.wait(for: .closed)
        try await home.sync {}
        #expect(recorder.events.isEmpty)
    }
}

/// A weak reference that can leave the run loop's thread.
final class WeakSocket: Sendable {
    // Sendable: a weak reference to a Sendable class, written once in init.
    nonisolated(unsafe) weak var socket: AsyncUdpSocket?

    init(_ socket: AsyncUdpSocket) {
        self.socket = socket
    }
}
