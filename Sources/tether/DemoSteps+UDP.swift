import Dispatch
import Foundation
import NIOCore
import TetherSockets

extension DemoSteps {
    /// UDP on both faces: an async-face echo socket answers a delegate-face socket's datagram.
    static func udpRoundTrip() async throws -> String {
        let echo = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        let server = Task {
            for try await datagram in echo.datagrams {
                try await echo.send(datagram.data, to: datagram.remoteAddress)
            }
        }
        defer { server.cancel() }
        let client = UDPDemoClient()
        let socket = GCDAsyncUdpSocket(delegate: client, delegateQueue: client.queue)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        try socket.beginReceiving()
        socket.send(Data("ping".utf8), toHost: "127.0.0.1", port: UInt16(echo.localPort), withTimeout: 5, tag: 1)
        let reply = try await client.reply()
        socket.close()
        try await echo.close()
        return "\"ping\" → \"\(String(decoding: reply, as: UTF8.self))\" over UDP (delegate face ↔ async face)"
    }
}

/// Waits for the first datagram a delegate-face socket receives (bounded by 5 s).
private final class UDPDemoClient: GCDAsyncUdpSocketDelegate {
    let queue = DispatchQueue(label: "demo.udp")
    private var continuation: CheckedContinuation<Data, any Error>?
    private var received: Data?

    func reply() async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                if let received = self.received {
                    continuation.resume(returning: received)
                } else {
                    self.continuation = continuation
                    self.queue.asyncAfter(deadline: .now() + 5) {
                        self.continuation?.resume(throwing: DemoFailure(description: "no UDP reply within 5 s"))
                        self.continuation = nil
                    }
                }
            }
        }
    }

    func udpSocket(_ sock: GCDAsyncUdpSocket, didReceive data: Data, fromAddress address: Data, withFilterContext: Any?)
    {
        received = data
        continuation?.resume(returning: data)
        continuation = nil
    }
}

// Sendable: its vars are touched only on `queue` (the delegate callback and `reply()`'s blocks).
extension UDPDemoClient: @unchecked Sendable {}
