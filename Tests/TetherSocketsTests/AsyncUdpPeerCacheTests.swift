import Foundation
import Testing
import TetherSockets

/// The RunLoop-era face keeps the last sender's host and port the same way.
@Suite(.timeLimit(.minutes(1)))
struct AsyncUdpPeerCacheTests {
    @Test("datagrams from two senders, interleaved, each report their own sender's port")
    func interleavedSendersKeepTheirPorts() async throws {
        let home = RunLoopThread()
        defer { home.stop() }
        let recorder = AsyncUdpRecorder()
        let socket = try await makeAsyncUdpSocket(on: home, recorder)
        try socket.bind(toAddress: "127.0.0.1", port: 0)
        for tag in 0..<20 { socket.receive(withTimeout: -1, tag: tag) }
        let first = try await AsyncUdpTestSender.make()
        let second = try await AsyncUdpTestSender.make()
        let senders = [first, second]
        for index in 0..<20 {
            try await senders[index % 2].send([Data("\(index % 2)".utf8)], to: socket.localPort())
        }
        let events = try await recorder.wait { $0.count == 20 }
        let from = recorder.receivedFrom
        #expect(from.count == 20)
        for (event, sender) in zip(events, from) {
            guard case .received(let data, _, _) = event else { continue }
            let index = Int(String(decoding: data, as: UTF8.self)) ?? -1
            #expect(sender.port == senders[index].port && sender.host == "127.0.0.1")
        }
        socket.close()
        await first.close()
        await second.close()
    }
}
