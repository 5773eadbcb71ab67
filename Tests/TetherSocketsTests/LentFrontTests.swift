import NIOCore
import Testing
import TetherSockets

/// A reader on another thread lets go of the bytes a read gave it with no lock between it and the event loop: only
/// the reference count, which the thread sanitizer cannot see. The connection must not then grow or compact that
/// storage in place, or every such program is reported as racing (this test fails under `scripts/sanitize.sh thread`
/// when it does); what each read gets is checked in any build.
@Suite(.timeLimit(.minutes(1)))
struct LentFrontTests {
    @Test func aReaderThatLetsGoOfItsSliceBeforeTheBufferGrowsGetsItsBytesAndTheNextReadItsOwn() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        let tail = 200_000  // more than any one socket read: the buffer's front must grow to hold the next read
        for round in 0..<8 {
            let first = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            let second = (0..<tail).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) }
            try await onThread { peer.send(first) }
            // A slice of the buffer's front, which keeps the 990 bytes after it.
            var slice: ByteBuffer? = try await connection.read(toLength: 10)
            let next = Task { try await connection.read(toLength: 990 + tail) }
            // The reader looks at its bytes after the next read went to the loop, then lets go of them.
            #expect(slice.map { Array($0.readableBytesView) } == Array(first[..<10]))
            slice = nil
            try await onThread { peer.send(second) }
            let rest = try await next.value
            #expect(Array(rest.readableBytesView) == Array(first[10...]) + second, "round \(round)")
        }
        try await connection.close()
    }
}
