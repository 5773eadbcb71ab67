import Foundation
import NIOCore
import Testing
import TetherSockets

/// The delegate face keeps the last peer it saw (the sender's `sockaddr` bytes, the parsed literal host it sends to)
/// so that a datagram from or to the same peer costs no new address. These tests alternate two peers, so that a kept
/// peer that was reused for the other one shows.
@Suite(.timeLimit(.minutes(1)))
struct UDPPeerCacheTests {
    @Test("datagrams from two senders, interleaved, each report their own sender's address", arguments: [false, true])
    func interleavedSendersKeepTheirAddresses(onLoop: Bool) async throws {
        let recorder = UdpRecorder(label: "receiver")
        let socket = recorder.makeSocket()
        if onLoop { socket.callbackDelivery = .eventLoop }
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        try socket.beginReceiving()
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: Int(socket.localPort()))
        let first = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let second = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let senders = [first, second]
        for index in 0..<20 {
            try await senders[index % 2].send(ByteBuffer(string: "\(index % 2)"), to: address)
        }
        _ = try await recorder.waitForReceived(20)
        let ports = [UInt16(first.localPort), UInt16(second.localPort)]
        for event in recorder.events {
            guard case .received(let data, let port, _) = event else { continue }
            let sender = Int(String(decoding: data, as: UTF8.self)) ?? -1
            #expect(port == ports[sender])
        }
        socket.close()
        try await first.close()
        try await second.close()
    }

    @Test("sends to two literal hosts, interleaved, each reach their own peer")
    func interleavedLiteralDestinationsReachTheirPeers() async throws {
        let recorder = UdpRecorder(label: "sender")
        let socket = recorder.makeSocket()
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        let first = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let second = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let peers = [first, second]
        for index in 0..<20 {
            let peer = peers[index % 2]
            socket.send(
                Data("\(index % 2)".utf8),
                toHost: "127.0.0.1",
                port: UInt16(peer.localPort),
                withTimeout: 5,
                tag: index
            )
        }
        try await recorder.waitForSendResults(Set(0..<20))
        for (expected, peer) in peers.enumerated() {
            var iterator = peer.datagrams.makeAsyncIterator()
            for _ in 0..<10 {
                let datagram = try #require(try await iterator.next())
                #expect(String(buffer: datagram.data) == "\(expected)")
            }
        }
        socket.close()
        try await first.close()
        try await second.close()
    }
}
