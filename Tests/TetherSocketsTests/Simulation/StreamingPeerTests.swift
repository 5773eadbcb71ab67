import Foundation
import Testing
import TetherConcurrency
import TetherTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The simulations' POSIX peer tells a reset from an orderly close: the check that every byte reported written
/// arrived holds only after an orderly one, so a reset read as a FIN is a violation the socket did not commit.
@Suite struct StreamingPeerTests {
    /// The socket writes and then closes with the peer's bytes unread: its kernel answers with a reset, which may
    /// discard what it had not sent yet. The kernel reports the reset's error once, often to the peer's sender;
    /// its receiver then reads 0. Every round must still end as a reset.
    @Test func aResetThePeersSenderTookIsNotReadAsAnOrderlyClose() async throws {
        for round in 0..<40 {
            let (socket, peer) = try await connectedPair(seed: UInt64(round), limit: nil)
            let written = (0..<300_000).map { SimulatedStream.written(at: $0) }
            try await onThread {
                socket.send(written)
                // Bytes of the peer's are waiting unread: the close is a reset.
                var byte: UInt8 = 0
                while recv(socket.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0 { sched_yield() }
            }
            socket.close()
            let received = try await peer.receiverEnded.wait(timeout: .seconds(10))
            let end = peer.state.withLock { $0.endErrno }
            #expect(end != 0, "round \(round): a reset read as an orderly close after \(received) bytes")
            try await peer.close()
        }
    }

    /// The control: the socket reads all the peer sent (the peer then ends its side), writes and closes: a FIN,
    /// read as an orderly close, after every byte.
    @Test func anOrderlyCloseIsReadAsOneAfterEveryByte() async throws {
        for round in 0..<10 {
            let (socket, peer) = try await connectedPair(seed: UInt64(round), limit: 50_000)
            let written = (0..<300_000).map { SimulatedStream.written(at: $0) }
            let got = try await onThread { () -> Int in
                let got = socket.receiveToEnd().count
                socket.send(written)
                return got
            }
            #expect(got == 50_000)
            socket.close()
            let received = try await peer.receiverEnded.wait(timeout: .seconds(10))
            #expect(received == written.count)
            #expect(peer.state.withLock { $0.endErrno } == 0, "round \(round)")
            try await peer.close()
        }
    }

    /// A blocking socket (the simulated socket's end) and a ``StreamingPeer`` on the other end, started.
    private func connectedPair(seed: UInt64, limit: Int?) async throws -> (RawPeer, StreamingPeer) {
        let listener = try RawListener()
        defer { listener.close() }
        let (socket, accepted) = try await onThread {
            let socket = try RawPeer.connect(port: listener.port)
            return (socket, listener.accept())
        }
        let peer = StreamingPeer(fd: accepted.fd, stream: SimulatedStream(seed: seed, separator: [11]))
        accepted.release()
        peer.start(seed: seed, limit: limit)
        return (socket, peer)
    }
}
