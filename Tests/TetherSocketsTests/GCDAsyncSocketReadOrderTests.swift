import Foundation
import Testing
import TetherConcurrency
import TetherTestSupport

@testable import TetherSockets

/// Reads complete in the order they were issued, with the bytes owed to each, whichever thread issues them.
@Suite struct GCDAsyncSocketReadOrderTests {
    /// The byte at `offset` of the peer's stream.
    static func streamByte(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 31 &+ offset >> 8) }

    /// A delegate re-issuing a write and two length reads (5 and 7 bytes) from every second read's callback, and
    /// checking each read's tag and bytes against the stream.
    final class Reissuer: GCDAsyncSocketDelegate, @unchecked Sendable {
        let rounds: Int
        let violations = LockedBox<[String]>([])
        let finished = Handoff<Int>()
        // Touched on the delegate queue only.
        private var nextTag = 0
        private var offset = 0

        init(rounds: Int) {
            self.rounds = rounds
        }

        func issue(_ sock: GCDAsyncSocket, round: Int) {
            sock.write(Data([0x2A]), withTimeout: -1, tag: round)
            sock.readData(toLength: 5, withTimeout: -1, tag: 2 * round)
            sock.readData(toLength: 7, withTimeout: -1, tag: 2 * round + 1)
        }

        func socket(_ sock: GCDAsyncSocket, didRead data: Data, withTag tag: Int) {
            if tag != nextTag {
                violations.withLock { $0.append("tag \(tag) arrived when \(nextTag) was next") }
            }
            let expected = Data((offset..<offset + data.count).map(GCDAsyncSocketReadOrderTests.streamByte))
            if data != expected || data.count != (tag % 2 == 0 ? 5 : 7) {
                violations.withLock { $0.append("tag \(tag) at offset \(offset) got bytes that are not its own") }
            }
            nextTag = tag + 1
            offset += data.count
            guard tag % 2 == 1 else { return }
            let round = tag / 2 + 1
            if round == rounds {
                finished.put(offset)
                sock.disconnect()
            } else {
                issue(sock, round: round)
            }
        }
    }

    @Test func readsIssuedFromTheDelegateQueueCompleteInOrderUnderAStream() async throws {
        let rounds = 20_000
        let listener = try RawListener()
        defer { listener.close() }
        let delegate = Reissuer(rounds: rounds)
        let queue = DispatchQueue(label: "reissuer")
        let socket = GCDAsyncSocket(delegate: delegate, delegateQueue: queue)
        try socket.connect(toHost: "127.0.0.1", onPort: listener.port, withTimeout: 5)
        queue.async { delegate.issue(socket, round: 0) }
        let peer = try await onThread { listener.accept() }
        defer { peer.close() }
        let total = rounds * 12
        // The peer streams the whole stream in chunks of every size while a thread of its own drains the writes.
        let drained = Thread {
            _ = peer.receive(count: rounds)
        }
        drained.start()
        let sender = Thread {
            var offset = 0
            var size = 1
            while offset < total {
                let end = min(offset + size, total)
                peer.send((offset..<end).map(GCDAsyncSocketReadOrderTests.streamByte))
                offset = end
                size = size % 4_099 + 13
            }
        }
        sender.start()
        let consumed = try await delegate.finished.next(timeout: .seconds(60))
        #expect(consumed == total)
        let violations = delegate.violations.withLock { $0 }
        #expect(violations.isEmpty, "\(violations.prefix(5))")
    }
}
