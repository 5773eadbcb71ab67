import Foundation
import Testing
import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// After `disconnectAfterWriting` no read can come, so the socket reads on and drops what arrives: a peer that sends
/// while the last writes go out is not stopped by a full buffer, and once it stops, the close finds nothing unread (a
/// FIN, every written byte delivered) instead of resetting the connection over bytes nobody would read. Without the
/// reading on, the peer's send stalls after a few megabytes and the close resets the connection, losing written bytes.
@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketCloseAfterWritingTests {
    /// Sends `count` bytes on the blocking `fd`, giving up when a send waits 20 s: the bytes sent.
    private static func send(_ count: Int, on fd: Int32) -> Int {
        // A `timeval` (seconds, microseconds): see ``StreamingPeer``'s initializer.
        var timeout: (Int, Int) = (20, 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<(Int, Int)>.size))
        let chunk = [UInt8](repeating: 0x70, count: 1 << 20)
        var sent = 0
        while sent < count {
            let n = chunk.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, min($0.count, count - sent), 0) }
            guard n > 0 else { break }
            sent += n
        }
        return sent
    }

    /// Reads until the end of the stream: the bytes read, and the errno that ended it (0 for an orderly end).
    private static func receiveToEnd(on fd: Int32) -> (count: Int, errno: Int32) {
        var timeout: (Int, Int) = (20, 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<(Int, Int)>.size))
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var count = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return (count, 0) }
            if n < 0 { return (count, errno) }
            count += n
        }
    }

    @Test func aPeerThatKeepsSendingIsReadAndDroppedUntilTheLastWriteIsOutThenTheStreamEndsCleanly() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let size = 64 * 1024 * 1024  // far more than both kernels' buffers and the socket's own hold
        connection.socket.write(Data(count: size), withTimeout: -1, tag: 1)
        connection.socket.disconnectAfterWriting()
        let fd = connection.peer.fd
        // The peer sends first and reads only once its send is done: the socket's write cannot finish before.
        let sent = try await onThread { Self.send(size, on: fd) }
        #expect(sent == size, "the socket stopped reading: the peer's send stalled after \(sent) bytes")
        // The peer sends no more: once every byte it sent reached the socket's kernel and the socket read it (a
        // close over unread bytes resets the connection, whatever the engine does), the peer reads; the socket's
        // last write can then go out, and the close finds nothing unread.
        let socketEnd = try #require(KernelQueues.otherEnd(of: fd))
        func drained() -> Bool { KernelQueues.unacknowledged(fd) == 0 && KernelQueues.unread(socketEnd) == 0 }
        let deadline = ContinuousClock.now + .seconds(20)
        while !drained() && ContinuousClock.now < deadline { await Task.yield() }
        #expect(drained(), "the socket left the peer's bytes unread")
        let (received, end) = try await onThread { Self.receiveToEnd(on: fd) }
        #expect(received == size)
        #expect(end == 0, "the stream ended with errno \(end), not a FIN")
        let error = try await connection.recorder.waitForDisconnect(timeout: .seconds(20))
        #expect(error == nil)
        #expect(connection.recorder.events.contains(.wrote(tag: 1)))
    }
}
