import NIOCore
import Testing

@testable import TetherSockets

/// A reader on another thread lets go of the bytes a read gave it with no lock between it and the event loop (only
/// the reference count), while the buffer they were sliced from must grow for the next read. The connection copies
/// that front into fresh storage instead of moving it in place (``ReceiveBuffer``), and each read gets its own bytes.
/// (The thread sanitizer once reported the in-place move as a race; this schedule did not make it report one.)
@Suite(.timeLimit(.minutes(1)))
struct LentFrontTests {
    /// Whether a read waits in the connection's queue (asked on its loop).
    private static func readIsQueued(on connection: TCPConnection) async throws -> Bool {
        let engine = connection.engine
        return try await engine.eventLoop.submit { engine.value.peek { $0.reads.hasRequests } }.get()
    }

    @Test func aReaderThatLetsGoOfItsSliceBeforeTheBufferGrowsGetsItsBytesAndTheNextReadItsOwn() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        // More than any one socket read (256 KiB at most): the front must grow to hold the next read.
        let tail = 600_000
        for round in 0..<8 {
            let first = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            let second = (0..<tail).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) }
            try await onThread { peer.send(first) }
            // A slice of the buffer's front, which keeps the 990 bytes after it.
            var slice: ByteBuffer? = try await connection.read(toLength: 10)
            let next = Task { try await connection.read(toLength: 990 + tail) }
            // The next read reaches the loop and waits there for bytes; only then does the reader look at its bytes
            // and let go of them, with nothing between it and the loop after that (the peer's bytes come through
            // the kernel).
            while try await !Self.readIsQueued(on: connection) { await Task.yield() }
            #expect(slice.map { Array($0.readableBytesView) } == Array(first[..<10]))
            slice = nil
            try await onThread { peer.send(second) }
            let rest = try await next.value
            #expect(Array(rest.readableBytesView) == Array(first[10...]) + second, "round \(round)")
        }
        try await connection.close()
    }
}
