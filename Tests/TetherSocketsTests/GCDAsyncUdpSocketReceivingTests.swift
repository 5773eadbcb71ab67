import Dispatch
import Foundation
import NIOCore
import Testing
import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncUdpSocketReceivingTests {
    /// A bound receiver, a sender peer, and the receiver's address.
    struct Setup {
        let recorder: UdpRecorder
        let socket: GCDAsyncUdpSocket
        let sender: UDPSocket
        let address: SocketAddress

        static func make(host: String = "127.0.0.1") async throws -> Setup {
            let recorder = UdpRecorder(label: "receiver")
            let socket = recorder.makeSocket()
            try socket.bind(toPort: 0, interface: host)
            let sender = try await UDPSocket.bind(host: host, port: 0)
            let address = try SocketAddress(ipAddress: host, port: Int(socket.localPort()))
            return Setup(recorder: recorder, socket: socket, sender: sender, address: address)
        }

        func send(_ text: String) async throws {
            try await sender.send(ByteBuffer(string: text), to: address)
        }

        /// Every callback caused by datagrams already read is queued before this send's callback.
        func syncPoint(tag: Int) async throws {
            socket.send(Data("sync".utf8), toAddress: sockaddrBytes(sender.localAddress), withTimeout: 5, tag: tag)
            try await recorder.waitForSendResults([tag])
        }

        func close() async throws {
            socket.close()
            try await sender.close()
        }
    }

    @Test("receiveOnce delivers one datagram and stops; the next waits for the next call")
    func receiveOnceDeliversOne() async throws {
        let setup = try await Setup.make()
        for text in ["first", "second", "third"] { try await setup.send(text) }
        try setup.socket.receiveOnce()
        try await setup.recorder.waitForReceived(1)
        try await setup.syncPoint(tag: 1)
        #expect(setup.recorder.receivedData == [Data("first".utf8)])
        try setup.socket.receiveOnce()
        try await setup.recorder.waitForReceived(2)
        try await setup.syncPoint(tag: 2)
        #expect(setup.recorder.receivedData == [Data("first".utf8), Data("second".utf8)])
        try setup.socket.receiveOnce()
        try await setup.recorder.waitForReceived(3)
        #expect(setup.recorder.receivedData.last == Data("third".utf8))
        try await setup.close()
    }

    @Test("pauseReceiving stops delivery and beginReceiving resumes it without loss")
    func pauseAndResume() async throws {
        let setup = try await Setup.make()
        try setup.socket.beginReceiving()
        try await setup.send("before")
        try await setup.recorder.waitForReceived(1)
        setup.socket.pauseReceiving()
        try await setup.syncPoint(tag: 1)
        try await setup.send("during 1")
        try await setup.send("during 2")
        try await setup.syncPoint(tag: 2)
        #expect(setup.recorder.receivedData == [Data("before".utf8)])
        try setup.socket.beginReceiving()
        try await setup.recorder.waitForReceived(3)
        #expect(
            setup.recorder.receivedData == [Data("before".utf8), Data("during 1".utf8), Data("during 2".utf8)]
        )
        try await setup.close()
    }

    @Test("a receive filter drops datagrams and hands its context to the delegate", arguments: [true, false])
    func aReceiveFilterDropsAndAnnotates(isAsynchronous: Bool) async throws {
        let setup = try await Setup.make()
        setup.socket.setReceiveFilter(
            { data, address, context in
                guard data.first != UInt8(ascii: "x"), GCDAsyncUdpSocket.port(fromAddress: address) != 0 else {
                    return false
                }
                context = String(decoding: data, as: UTF8.self).uppercased()
                return true
            },
            with: DispatchQueue(label: "receive-filter"),
            isAsynchronous: isAsynchronous
        )
        try setup.socket.beginReceiving()
        for text in ["alpha", "xdrop", "beta"] { try await setup.send(text) }
        try await setup.recorder.waitForReceived(2)
        try await setup.syncPoint(tag: 1)
        let port = UInt16(setup.sender.localPort)
        let received = setup.recorder.events.filter { $0.receivedData != nil }
        #expect(
            received == [
                .received(Data("alpha".utf8), port: port, context: "ALPHA"),
                .received(Data("beta".utf8), port: port, context: "BETA"),
            ]
        )
        try await setup.close()
    }

    @Test("receiveOnce with a filter skips rejected datagrams and delivers the next accepted one")
    func receiveOnceSkipsFilteredDatagrams() async throws {
        let setup = try await Setup.make()
        setup.socket.setReceiveFilter({ data, _, _ in data.first != UInt8(ascii: "x") }, with: nil)
        for text in ["xno", "yes", "later"] { try await setup.send(text) }
        try setup.socket.receiveOnce()
        try await setup.recorder.waitForReceived(1)
        try await setup.syncPoint(tag: 1)
        #expect(setup.recorder.receivedData == [Data("yes".utf8)])
        try await setup.close()
    }

    @Test("datagrams longer than the maximum receive size are truncated", arguments: ["127.0.0.1", "::1"])
    func maximumReceiveSizesTruncate(host: String) async throws {
        let setup = try await Setup.make(host: host)
        setup.socket.setMaxReceiveIPv4BufferSize(100)
        setup.socket.setMaxReceiveIPv6BufferSize(200)
        #expect(setup.socket.maxReceiveIPv4BufferSize() == 100)
        #expect(setup.socket.maxReceiveIPv6BufferSize() == 200)
        try setup.socket.beginReceiving()
        let payload = udpPattern(1_000)
        try await setup.sender.send(ByteBuffer(bytes: payload), to: setup.address)
        let received = try await setup.recorder.waitForReceived(1)
        let limit = host == "::1" ? 200 : 100
        #expect(received == [payload.prefix(limit)])
        try await setup.close()
    }
}

/// The `sockaddr` bytes of an address.
func sockaddrBytes(_ address: SocketAddress) -> Data {
    var bytes = Data()
    address.withSockAddr { pointer, length in bytes = Data(bytes: pointer, count: length) }
    return bytes
}
