import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TetherSockets

/// A datagram's `didSendDataWithTag` comes before the callback of its echo, on both deliveries, also when the send
/// went straight to the kernel from a thread other than the loop (the echo may be back before that thread has
/// queued the result).
@Suite(.timeLimit(.minutes(1)))
struct UDPSendResultOrderTests {
    /// Sends the next datagram from a thread of its own each time the last one's echo arrived; records the order.
    final class OrderDelegate: GCDAsyncUdpSocketDelegate, @unchecked Sendable {
        let lock = NIOLock()
        var log: [String] = []
        let echoed = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)

        func udpSocket(_ sock: GCDAsyncUdpSocket, didSendDataWithTag tag: Int) {
            lock.withLock { log.append("sent \(tag)") }
        }

        func udpSocket(
            _ sock: GCDAsyncUdpSocket,
            didReceive data: Data,
            fromAddress address: Data,
            withFilterContext filterContext: Any?
        ) {
            lock.withLock { log.append("received \(String(decoding: data, as: UTF8.self))") }
            echoed.withLockedValue { continuation in
                continuation?.resume()
                continuation = nil
            }
        }
    }

    @Test(arguments: [GCDAsyncSocket.CallbackDelivery.delegateQueue, .eventLoop])
    func aSendsResultComesBeforeItsEcho(delivery: GCDAsyncSocket.CallbackDelivery) async throws {
        let echo = try await UDPEchoPeer.start(host: "127.0.0.1")
        let delegate = OrderDelegate()
        let socket = GCDAsyncUdpSocket(delegate: delegate, delegateQueue: DispatchQueue(label: "udp.order"))
        socket.callbackDelivery = delivery
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        try socket.beginReceiving()
        let rounds = 1_000
        for round in 0..<rounds {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                delegate.echoed.withLockedValue { $0 = continuation }
                Thread.detachNewThread {
                    socket.send(Data("\(round)".utf8), toHost: "127.0.0.1", port: echo.port, withTimeout: 5, tag: round)
                }
            }
        }
        socket.close()
        let log = delegate.lock.withLock { delegate.log }
        var late: [Int] = []
        for round in 0..<rounds {
            let received = try #require(log.firstIndex(of: "received \(round)"))
            if let sent = log.firstIndex(of: "sent \(round)"), sent < received { continue }
            late.append(round)
        }
        #expect(late.isEmpty, "didSend after its echo in rounds \(late.prefix(20)) of \(rounds)")
        await echo.stop()
    }
}
