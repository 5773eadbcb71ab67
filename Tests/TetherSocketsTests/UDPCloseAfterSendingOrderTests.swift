import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import TetherSockets

/// The order of a thread's send results across `closeAfterSending()`: a send can reach the closing life only after
/// that life ended (it was handed to the life's loop just before the end); it then goes out in the next life, and a
/// send the same thread issued after it must not overtake it there.
@Suite(.timeLimit(.minutes(1)))
struct UDPCloseAfterSendingOrderTests {
    /// The socket runs on a loop of its own, held twice by the test: so that the close runs before the first send
    /// reaches the loop, and so that the second send starts the next life while the first is still on its way.
    @Test func aSendHandedOnByTheClosingLifeIsReportedBeforeALaterSendOfItsThread() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: peer.port).sockaddrData
        let recorder = UdpRecorder(label: "udp.handed-on")
        let socket = recorder.makeSocket(eventLoopGroup: group)
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        // The first life is ready and idle: `closeAfterSending` then ends it as soon as the loop runs it.
        socket.send(Data("zero".utf8), toAddress: target, withTimeout: 5, tag: 0)
        try await recorder.waitForSendResults([0])

        let loop = group.next()
        let (beforeClose, afterClose) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        defer {
            beforeClose.signal()
            afterClose.signal()
        }
        // The loop's tasks, in order: hold, the close, hold, the first send.
        loop.execute { beforeClose.wait() }
        socket.closeAfterSending()
        loop.execute { afterClose.wait() }
        socket.send(Data("one".utf8), toAddress: target, withTimeout: 5, tag: 1)
        beforeClose.signal()
        try await recorder.wait { $0.contains(.closed(code: nil)) }
        // The first life ended; the first send has not reached it yet. This one starts the next life.
        socket.send(Data("two".utf8), toAddress: target, withTimeout: 5, tag: 2)
        afterClose.signal()

        try await recorder.waitForSendResults([1, 2])
        let results = recorder.events.filter {
            switch $0 {
            case .sent, .notSent: true
            default: false
            }
        }
        #expect(results == [.sent(tag: 0), .sent(tag: 1), .sent(tag: 2)], "\(recorder.events)")
        let arrived = try await peer.wait(for: 3).map { String(buffer: $0.data) }
        #expect(arrived == ["zero", "one", "two"])
        socket.close()
        try await recorder.wait { $0.filter { $0 == .closed(code: nil) }.count == 2 }
        await peer.stop()
        try await group.shutdownGracefully()
    }
}
