import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// The listener's backlog: found by `tether-stress tcp` (10,000 connections, 500 connects at a time), where a
/// `GCDAsyncSocket` server took 17 s to be connected to and a `TCPListener` 1.6 s. NIO listened again on the
/// descriptor with its default backlog of 128, so SYNs beyond 129 waiting clients were dropped and retried a second
/// later.
@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketBacklogTests {
    /// While the listener's only event loop is held, nothing is accepted: connects complete as long as the kernel's
    /// accept queue has room, which is the backlog (plus one). 300 clients must all be queued, as with the original's
    /// `listen(fd, 1024)`; with a backlog of 128 about 129 were and the rest never completed.
    @Test func aBurstOf300ConnectsIsQueuedWhileNothingIsAccepted() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully { _ in } }
        let recorder = SocketRecorder(label: "listener")
        let listener = GCDAsyncSocket(delegate: recorder, delegateQueue: recorder.queue, eventLoopGroup: group)
        try listener.accept(onInterface: "127.0.0.1", port: 0)
        defer { listener.disconnect() }
        // One accepted client first: the listening channel exists (NIO made it, and listened, on the loop).
        let port = listener.localPort
        let first = try await onThread { try RawPeer.connect(port: port) }
        defer { first.close() }
        try await recorder.wait { $0.contains(.accepted) }
        let held = await LoopBlocker.hold(group.next())
        defer { held.unblock() }
        var clients: [RawPeer] = []
        defer { for client in clients { client.close() } }
        for _ in 0..<300 { clients.append(try RawPeer.connectNonBlocking(port: port)) }
        let established = await countEstablished(clients.map(\.fd), deadline: .seconds(5))
        #expect(established == 300)
    }

    /// Waits with `poll` (no sleeping) until every descriptor's connect completed or the deadline passed; returns how
    /// many completed without an error.
    private func countEstablished(_ descriptors: [Int32], deadline: Duration) async -> Int {
        (try? await onThread {
            var pending = descriptors.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
            var completed = 0
            let end = ContinuousClock.now + deadline
            while !pending.isEmpty, ContinuousClock.now < end {
                let left = end - ContinuousClock.now
                let milliseconds = Int32(
                    left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
                )
                guard poll(&pending, nfds_t(pending.count), max(1, milliseconds)) > 0 else { continue }
                var still: [pollfd] = []
                for entry in pending {
                    if entry.revents == 0 {
                        still.append(pollfd(fd: entry.fd, events: Int16(POLLOUT), revents: 0))
                        continue
                    }
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(entry.fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 { completed += 1 }
                }
                pending = still
            }
            return completed
        }) ?? -1
    }
}
