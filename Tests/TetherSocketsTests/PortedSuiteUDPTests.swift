import Foundation
import Testing
import TetherSockets

/// CocoaAsyncSocket's own UDP tests (`GCDAsyncUdpSocketConnectionTests.m`), ported: a client sends a datagram of a
/// given size to a server bound on loopback, on each era's classes. The sizes are the original's classes: "micro"
/// (under 9,217 bytes), "large" (9,217…65,507) and "invalid" (over the largest IPv4 datagram, 65,507 bytes).
@Suite("CocoaAsyncSocket's suite, ported: UDP on both eras", .timeLimit(.minutes(1)))
struct PortedSuiteUDPTests {
    enum Era: String, CaseIterable, Sendable {
        case gcd, runLoop
    }

    /// A pattern of `count` bytes ("test-data-" repeated, as the original).
    static func payload(_ count: Int) -> Data {
        let word = Array("test-data-".utf8)
        return Data((0..<count).map { word[$0 % word.count] })
    }

    /// Sends `payload` from a client to a server on loopback, then a 4-byte datagram; returns what the server
    /// received (in order) and whether the first send was reported as not sent.
    static func exchange(_ era: Era, payload: Data) async throws -> (received: [Data], firstFailed: Bool) {
        switch era {
        case .gcd:
            let server = UdpRecorder()
            let serverSocket = server.makeSocket()
            try serverSocket.bind(toPort: 0, interface: "127.0.0.1")
            try serverSocket.beginReceiving()
            defer { serverSocket.close() }
            let client = UdpRecorder()
            let clientSocket = client.makeSocket()
            defer { clientSocket.close() }
            let port = serverSocket.localPort()
            clientSocket.send(payload, toHost: "127.0.0.1", port: port, withTimeout: 30, tag: 1)
            clientSocket.send(Data("done".utf8), toHost: "127.0.0.1", port: port, withTimeout: 30, tag: 2)
            try await client.waitForSendResults([1, 2])
            let failed = client.events.contains { if case .notSent(1, _, _) = $0 { true } else { false } }
            try await server.waitForReceived(failed ? 1 : 2)
            return (server.receivedData, failed)
        case .runLoop:
            let home = RunLoopThread(name: "ported-udp")
            defer { home.stop() }
            let server = AsyncUdpRecorder()
            let serverSocket = try await makeAsyncUdpSocket(on: home, server)
            defer { serverSocket.close() }
            try serverSocket.bind(toAddress: "127.0.0.1", port: 0)
            // The RunLoop era truncates at maxReceiveBufferSize (9,216 by default): room for the largest datagram.
            serverSocket.setMaxReceiveBufferSize(65_535)
            serverSocket.receive(withTimeout: 30, tag: 1)
            serverSocket.receive(withTimeout: 30, tag: 2)
            let client = AsyncUdpRecorder()
            let clientSocket = try await makeAsyncUdpSocket(on: home, client)
            defer { clientSocket.close() }
            let port = UInt16(serverSocket.localPort())
            #expect(clientSocket.send(payload, toHost: "127.0.0.1", port: port, withTimeout: 30, tag: 1))
            #expect(clientSocket.send(Data("done".utf8), toHost: "127.0.0.1", port: port, withTimeout: 30, tag: 2))
            try await client.wait { events in
                events.contains(.sent(tag: 2))
                    || events.contains { if case .notSent(2, _, _) = $0 { true } else { false } }
            }
            let failed = client.events.contains { if case .notSent(1, _, _) = $0 { true } else { false } }
            try await server.wait { $0.compactMap(\.receivedData).count >= (failed ? 1 : 2) }
            return (server.receivedData, failed)
        }
    }

    @Test("a micro datagram (9,216 bytes) arrives whole", arguments: Era.allCases)
    func microDatagram(era: Era) async throws {
        let payload = Self.payload(9_216)
        let (received, failed) = try await Self.exchange(era, payload: payload)
        #expect(!failed)
        #expect(received == [payload, Data("done".utf8)])
    }

    @Test("a large datagram (9,217 and 65,507 bytes) arrives whole", arguments: Era.allCases, [9_217, 65_507])
    func largeDatagram(era: Era, size: Int) async throws {
        let payload = Self.payload(size)
        let (received, failed) = try await Self.exchange(era, payload: payload)
        #expect(!failed)
        #expect(received.first?.count == size)
        #expect(received.first == payload)
    }

    @Test("an invalid datagram (65,508 bytes) is reported not sent, and the socket goes on", arguments: Era.allCases)
    func invalidDatagram(era: Era) async throws {
        let (received, failed) = try await Self.exchange(era, payload: Self.payload(65_508))
        #expect(failed)
        #expect(received == [Data("done".utf8)])
    }
}
