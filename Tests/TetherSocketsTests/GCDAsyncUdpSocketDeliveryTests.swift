import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TetherSockets

/// `callbackDelivery = .eventLoop` on the UDP delegate face: no delegate queue, callbacks on the socket's event
/// loop, a send's result never nested inside the callback that sent it, and `udpSocketDidClose` last.
@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncUdpSocketDeliveryTests {
    /// Answers each datagram from its `didReceive` and records where and how every callback ran.
    final class LoopDelegate: GCDAsyncUdpSocketDelegate, @unchecked Sendable {
        let lock = NIOLock()
        var log: [String] = []
        var offLoop = 0
        var depth = 0
        var nested = 0
        var replies = 0
        let closed = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        let done = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        let peer: (host: String, port: UInt16)
        let rounds: Int

        init(peer: (host: String, port: UInt16), rounds: Int) {
            self.peer = peer
            self.rounds = rounds
        }

        private func enter(_ entry: String) {
            let onLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
            lock.withLock {
                if !onLoop { offLoop += 1 }
                if depth > 0 { nested += 1 }
                depth += 1
                log.append(entry)
            }
        }

        private func leave() { lock.withLock { depth -= 1 } }

        func udpSocket(_ sock: GCDAsyncUdpSocket, didSendDataWithTag tag: Int) {
            enter("sent \(tag)")
            leave()
        }

        func udpSocket(
            _ sock: GCDAsyncUdpSocket,
            didReceive data: Data,
            fromAddress address: Data,
            withFilterContext filterContext: Any?
        ) {
            enter("received \(String(decoding: data, as: UTF8.self))")
            let count = lock.withLock { () -> Int in
                replies += 1
                return replies
            }
            if count < rounds {
                sock.send(Data("\(count)".utf8), toHost: peer.host, port: peer.port, withTimeout: 5, tag: count)
            } else {
                done.withLockedValue { $0?.resume() }
            }
            leave()
        }

        func udpSocketDidClose(_ sock: GCDAsyncUdpSocket, withError error: (any Error)?) {
            enter("closed")
            leave()
            closed.withLockedValue { $0?.resume() }
        }
    }

    @Test func callbacksRunOnTheEventLoopInOrderAndNeverNested() async throws {
        let echo = try await UDPEchoPeer.start(host: "127.0.0.1")
        let delegate = LoopDelegate(peer: ("127.0.0.1", echo.port), rounds: 50)
        let socket = GCDAsyncUdpSocket(delegate: delegate)  // no delegate queue: event-loop delivery needs none
        socket.callbackDelivery = .eventLoop
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        try socket.beginReceiving()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegate.done.withLockedValue { $0 = continuation }
            socket.send(Data("0".utf8), toHost: "127.0.0.1", port: echo.port, withTimeout: 5, tag: 0)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegate.closed.withLockedValue { $0 = continuation }
            socket.close()
        }
        let (log, offLoop, nested) = delegate.lock.withLock { (delegate.log, delegate.offLoop, delegate.nested) }
        #expect(offLoop == 0)
        #expect(nested == 0)
        #expect(log.last == "closed")
        // Each reply follows the result of the send that caused it.
        for round in 0..<50 {
            let sent = try #require(log.firstIndex(of: "sent \(round)"))
            let received = try #require(log.firstIndex(of: "received \(round)"))
            #expect(sent < received)
        }
        await echo.stop()
    }

    @Test func queueDeliveryStillNeedsAQueue() throws {
        let delegate = LoopDelegate(peer: ("127.0.0.1", 9), rounds: 1)
        let socket = GCDAsyncUdpSocket(delegate: delegate)
        let error = #expect(throws: GCDAsyncUdpSocketError.self) { try socket.bind(toPort: 0) }
        #expect(error?.message == "Attempting to use socket without a delegate queue. Set a delegate queue first.")
        socket.callbackDelivery = .eventLoop
        try socket.bind(toPort: 0)
        socket.close()
        withExtendedLifetime(delegate) {}
    }
}
