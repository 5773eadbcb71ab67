import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The hang report's kernel view: it finds the other end of a loopback connection held by this process and counts
/// the bytes one end received and did not read, and `ss` reports both ends.
@Suite struct KernelQueuesTests {
    @Test func findsTheOtherEndAndTheBytesItHasNotRead() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let (socket, accepted) = try await onThread { (try RawPeer.connect(port: listener.port), listener.accept()) }
        defer {
            socket.close()
            accepted.close()
        }
        #expect(KernelQueues.otherEnd(of: accepted.fd) == socket.fd)
        #expect(KernelQueues.otherEnd(of: socket.fd) == accepted.fd)
        #expect(KernelQueues.describe(accepted.fd).hasSuffix("unread 0, unacknowledged 0"))
        socket.send([UInt8](repeating: 7, count: 1_000))
        // The bytes arrive as one segment on loopback: waiting until the descriptor is readable waits for all of them.
        var ready = pollfd(fd: accepted.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 10_000) == 1)
        #expect(KernelQueues.describe(accepted.fd).contains("unread 1000,"))
        // `ss` shows both ends of the connection, each with its windows and memory.
        let statistics = KernelQueues.statistics(accepted.fd)
        #expect(statistics.components(separatedBy: "ESTAB").count == 3, "\(statistics)")
        #expect(statistics.contains("skmem:"), "\(statistics)")
    }
}
