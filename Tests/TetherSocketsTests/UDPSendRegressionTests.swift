import Foundation
import NIOCore
import Testing

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// Sends and connects that used to vanish or hang, and the size of buffered datagrams.
@Suite(.timeLimit(.minutes(1)))
struct UDPSendRegressionTests {
    @Test func aSendRightAfterCloseAfterSendingIsReportedAndArrives() async throws {
        let peer = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: peer.localPort).sockaddrData
        let recorder = UdpRecorder()
        let socket = recorder.makeSocket()
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        socket.closeAfterSending()
        socket.send(Data("after".utf8), toAddress: target, withTimeout: 5, tag: 7)
        try await recorder.waitForSendResults([7])
        #expect(recorder.events.contains(.sent(tag: 7)), "\(recorder.events)")
        var iterator = peer.datagrams.makeAsyncIterator()
        let datagram = try await iterator.next()
        #expect(datagram.map { String(buffer: $0.data) } == "after")
        socket.close()
        try await peer.close()
    }

    @Test func twoConcurrentConnectsBothGetAnAnswer() async throws {
        let peer = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let home = RunLoopThread()
        defer { home.stop() }
        for _ in 0..<20 {
            let socket = try await makeAsyncUdpSocket(on: home, nil)
            let port = UInt16(peer.localPort)
            async let first = onThread { () -> Bool in (try? socket.connect(toHost: "127.0.0.1", onPort: port)) != nil }
            async let second = onThread { () -> Bool in (try? socket.connect(toHost: "127.0.0.1", onPort: port)) != nil
            }
            let answers = try await [first, second]
            #expect(answers.filter { $0 }.count == 1, "exactly one connect succeeds: \(answers)")
            socket.close()
        }
        try await peer.close()
    }

    @Test func bufferedSmallDatagramsHoldTheirSizeNotTheReceiveBuffer() async throws {
        // 512 datagrams of 8 bytes waiting for the consumer. Bound: 64 KiB in all (128 bytes a datagram); each one
        // holding the engine's 64 KiB receive buffer would be 32 MiB.
        let receiver = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let sender = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: receiver.localPort)
        let count = 512
        for sequence in 0..<UInt64(count) {
            var buffer = ByteBuffer()
            buffer.writeInteger(sequence)
            try await sender.send(buffer, to: target)
        }
        let drops = try UDPFloodTests.kernelDrops(port: receiver.localPort)
        var capacities = 0
        var received = 0
        var iterator = receiver.datagrams.makeAsyncIterator()
        while received < count - drops, let datagram = try await iterator.next() {
            #expect(datagram.data.readableBytes == 8)
            capacities += datagram.data.capacity
            received += 1
        }
        #expect(received > 0)
        let perDatagram = capacities / max(received, 1)
        #expect(perDatagram * count < 64 * 1_024, "\(capacities) bytes of capacity for \(received) datagrams")
        try await sender.close()
        try await receiver.close()
    }
}
