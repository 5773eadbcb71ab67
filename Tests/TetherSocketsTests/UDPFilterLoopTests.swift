import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import TetherSockets

/// Filters run on their own queue, never with `queue.sync` from the event loop: while a filter runs, the socket's
/// loop keeps serving other work.
@Suite(.timeLimit(.minutes(1)))
struct UDPFilterLoopTests {
    /// A filter body that proves the loop is free: it waits for a task that runs on the socket's event loop, which
    /// the test submits only once the filter has started. Were the loop waiting for the filter, that task could not
    /// run and the wait would give up (after 10 seconds, a failure detector, not a synchronisation).
    final class LoopProbe: Sendable {
        private let started = DispatchSemaphore(value: 0)
        private let loopRan = DispatchSemaphore(value: 0)
        private let outcome = NIOLockedValueBox<Bool?>(nil)

        /// Called by the filter on its queue.
        func filterRuns() {
            started.signal()
            let sawLoop = loopRan.wait(timeout: .now() + 10) == .success
            outcome.withLockedValue { $0 = sawLoop }
        }

        /// Waits until the filter runs, then releases it from a task on `loop`.
        func releaseFromLoop(_ loop: any EventLoop) async throws {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    self.started.wait()
                    continuation.resume()
                }
            }
            try await loop.submit { _ = self.loopRan.signal() }.get()
        }

        var loopWasFree: Bool? { outcome.withLockedValue { $0 } }
    }

    @Test("a send filter on its queue leaves the event loop free", arguments: [false, true])
    func sendFilterLeavesTheLoopFree(isAsynchronous: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let recorder = UdpRecorder(label: "send-filter-loop")
        let socket = recorder.makeSocket(eventLoopGroup: group)
        let probe = LoopProbe()
        socket.setSendFilter(
            { _, _, _ in
                probe.filterRuns()
                return true
            },
            with: DispatchQueue(label: "send-filter"),
            isAsynchronous: isAsynchronous
        )
        socket.send(Data("one".utf8), toHost: "127.0.0.1", port: UInt16(peer.port), withTimeout: 5, tag: 1)
        try await probe.releaseFromLoop(group.next())
        try await recorder.waitForSendResults([1])
        #expect(probe.loopWasFree == true)
        #expect(recorder.events == [.sent(tag: 1)])
        try await peer.wait(for: 1)
        socket.close()
        await peer.stop()
        try await group.shutdownGracefully()
    }

    @Test("a receive filter on its queue leaves the event loop free, and datagrams keep their order")
    func receiveFilterLeavesTheLoopFree() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorder = UdpRecorder(label: "receive-filter-loop")
        let socket = recorder.makeSocket(eventLoopGroup: group)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        let probe = LoopProbe()
        let first = NIOLockedValueBox(true)
        socket.setReceiveFilter(
            { _, _, _ in
                if first.withLockedValue({ value in
                    defer { value = false }
                    return value
                }) {
                    probe.filterRuns()
                }
                return true
            },
            with: DispatchQueue(label: "receive-filter"),
            isAsynchronous: false
        )
        try socket.beginReceiving()
        let sender = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: Int(socket.localPort()))
        for text in ["one", "two", "three"] { try await sender.send(ByteBuffer(string: text), to: address) }
        try await probe.releaseFromLoop(group.next())
        try await recorder.waitForReceived(3)
        #expect(probe.loopWasFree == true)
        #expect(recorder.receivedData == ["one", "two", "three"].map { Data($0.utf8) })
        socket.close()
        try await sender.close()
        try await group.shutdownGracefully()
    }
}
