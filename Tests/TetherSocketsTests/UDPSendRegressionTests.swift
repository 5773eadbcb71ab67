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

    /// A `close()` on another thread can land between the kernel taking a datagram and its callback being queued;
    /// the datagram reached the peer, so it is reported sent, before `udpSocketDidClose`. Each round closes in the
    /// middle of a burst of direct sends (later sends start a new life); every datagram the peer got must have been
    /// reported sent.
    @Test func aDatagramThatLeftBeforeACloseOnAnotherThreadIsReportedSent() async throws {
        let peer = try await UDPCollectingPeer(host: "127.0.0.1")
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: peer.port).sockaddrData
        let perRound = 80
        for round in 0..<100 {
            let recorder = UdpRecorder(label: "udp.close-race")
            let socket = recorder.makeSocket()
            socket.setIPv6Enabled(false)
            try socket.bind(toPort: 0, interface: "127.0.0.1")
            let base = round * perRound
            let closeAfter = 1 + (round * 7) % (perRound / 2)
            let halfway = DispatchSemaphore(value: 0)
            async let sender: Void = onThread {
                for index in 1...perRound {
                    let tag = base + index
                    socket.send(Self.payload(tag), toAddress: target, withTimeout: -1, tag: tag)
                    if index == closeAfter { halfway.signal() }
                }
            }
            async let closer: Void = onThread {
                halfway.wait()
                socket.close()
            }
            _ = try await (sender, closer)
            socket.close()
            recorder.queue.sync {}
            let reported = Set(
                recorder.events.compactMap { event -> Int? in
                    if case .sent(let tag) = event { return tag }
                    return nil
                }
            )
            // Datagrams arrive in the order they left: once the last one reported arrived, the others did.
            let drops = try UDPFloodTests.kernelDrops(port: peer.port)
            if let last = reported.max(), drops == 0 {
                _ = await eventually { peer.payloads.contains(Self.payload(last)) }
            }
            let arrived = peer.payloads.compactMap(Self.tag(of:)).filter { $0 > base && $0 <= base + perRound }
            let unreported = arrived.filter { !reported.contains($0) }
            #expect(unreported.isEmpty, "round \(round): arrived without didSend: \(unreported); \(recorder.events)")
            if !unreported.isEmpty { break }
        }
        await peer.stop()
    }

    private static func payload(_ tag: Int) -> Data {
        withUnsafeBytes(of: UInt64(tag).bigEndian) { Data($0) }
    }

    private static func tag(of payload: Data) -> Int? {
        guard payload.count == 8 else { return nil }
        return Int(payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// A connect asked for right after `closeAfterSending` (the queue empty, so the life ends at once) reaches the
    /// ended life: it connects in a new one, as the original's next connect opened new sockets, and is answered.
    @Test func aConnectRightAfterCloseAfterSendingIsAnswered() async throws {
        let peer = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: peer.localPort).sockaddrData
        for _ in 0..<20 {
            let recorder = UdpRecorder()
            let socket = recorder.makeSocket()
            socket.setIPv6Enabled(false)
            try socket.bind(toPort: 0, interface: "127.0.0.1")
            socket.closeAfterSending()
            try socket.connect(toAddress: target)
            let events = try await recorder.wait { events in
                events.contains {
                    switch $0 {
                    case .connected, .notConnected: true
                    default: false
                    }
                }
            }
            #expect(events.contains(.connected(port: UInt16(peer.localPort))), "\(events)")
            #expect(socket.isConnected())
            socket.close()
        }
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
