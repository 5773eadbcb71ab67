import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency

@testable import TetherSockets

#if canImport(Glibc)
import Glibc
#endif

/// The inodes of the sockets this process holds open (`/proc/self/fd`): a socket's inode is its own, so a test can
/// watch its sockets close while other tests open and close theirs.
func openSocketInodes() -> Set<String> {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    var inodes = Set<String>()
    for entry in entries {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
            target.hasPrefix("socket:")
        else { continue }
        inodes.insert(target)
    }
    return inodes
}

/// Waits (bounded, 10 s) until `condition` holds, re-checking after each yield; false if it never did.
func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// Descriptors: none is used after NIO closed it, and none outlives the socket that owned it.
@Suite(.timeLimit(.minutes(1)))
struct UDPDescriptorRegressionTests {
    @Test func aSetterAfterNIOClosedTheChannelThrowsAndLeavesANewDescriptorAlone() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorder = UdpRecorder()
        recorder.markQueue()
        let socket = GCDAsyncUdpSocket(delegate: recorder, delegateQueue: recorder.queue, eventLoopGroup: group)
        socket.setIPv6Enabled(false)
        try socket.bind(toPort: 0, interface: "127.0.0.1")
        let runtime = try #require(socket.state.withLock { $0.sockets?.runtime })
        var channel: (any Channel)?
        let registered = await eventually {
            channel = try? runtime.currentChannels().wait()[.inet]
            return channel != nil
        }
        #expect(registered)
        // Holding the socket's lock, as a setter does: the loop closes the channel (NIO's side, not the user's
        // close) and then waits for the lock to end the life; the descriptor number is free meanwhile.
        let (thrown, reopened): ((any Error)?, Int32) = socket.state.withLock { s in
            channel?.close(promise: nil)
            let deadline = ContinuousClock.now + .seconds(10)
            while runtime.withDescriptor(.inet, { _ in true }) != nil, ContinuousClock.now < deadline { sched_yield() }
            let reopened = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            do {
                try socket.withOpenDescriptor(s, .inet) { fd in
                    try GCDAsyncUdpSocket.setOption(fd, SOL_SOCKET, SO_BROADCAST, 1, function: "setsockopt")
                }
                return (nil, reopened)
            } catch {
                return (error, reopened)
            }
        }
        defer { _ = Glibc.close(reopened) }
        #expect((thrown as? GCDAsyncUdpSocketError)?.code == .closed, "\(String(describing: thrown))")
        var value: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(reopened, SOL_SOCKET, SO_BROADCAST, &value, &length) == 0)
        #expect(value == 0, "the descriptor opened since got SO_BROADCAST")
        try await recorder.wait { $0.contains { if case .closed = $0 { true } else { false } } }
        try await group.shutdownGracefully()
    }

    @Test func aMembershipChangeAfterNIOClosedTheAsyncSocketThrowsClosed() async throws {
        let socket = try await UDPSocket.bind(host: "127.0.0.1", port: 0)
        try await socket.channel.close()
        let reopened = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { _ = Glibc.close(reopened) }
        await #expect(throws: GCDAsyncSocketError.self) {
            try await socket.joinMulticastGroup("239.7.7.7", interface: "127.0.0.1")
        }
        do {
            try await socket.joinMulticastGroup("239.7.7.7", interface: "127.0.0.1")
        } catch let error as GCDAsyncSocketError {
            #expect(error.code == .closed)
        }
        // Not joined by the call above: joining it here succeeds (a second join would be EADDRINUSE).
        let group = try SocketAddress(ipAddress: "239.7.7.7", port: 0)
        let loopback = try SocketAddress(ipAddress: "127.0.0.1", port: 0)
        #expect(throws: Never.self) {
            try GCDAsyncUdpSocket.setMembership(
                reopened,
                group: group,
                interfaceIPv4: loopback,
                interfaceIndex: 0,
                join: true
            )
        }
    }

    @Test func delegateSocketsDroppedWithoutCloseGiveTheirDescriptorsBack() async throws {
        let recorder = UdpRecorder()
        var sockets: [GCDAsyncUdpSocket] = []
        for _ in 0..<50 {
            let socket = recorder.makeSocket()
            try socket.bind(toPort: 0, interface: "127.0.0.1")
            sockets.append(socket)
        }
        // The sockets' own ports (other tests open sockets in parallel in this process).
        let inodes = OpenSockets.udpInodes(boundTo: Set(sockets.map { Int($0.localPort()) }))
        #expect(inodes.count == 50)
        sockets.removeAll()
        try await OpenSockets.waitUntilClosed(inodes: inodes)
        #expect(!recorder.events.contains { if case .closed = $0 { true } else { false } })
    }

    @Test func runLoopSocketsDroppedWithoutCloseGiveTheirDescriptorsBack() async throws {
        let inodes: Set<UInt64> = try await onThread {
            var sockets: [AsyncUdpSocket] = []
            for _ in 0..<50 {
                let socket = AsyncUdpSocket()
                try socket.bind(toAddress: "127.0.0.1", port: 0)
                sockets.append(socket)
            }
            return OpenSockets.udpInodes(boundTo: Set(sockets.map { Int($0.localPort()) }))
        }
        #expect(inodes.count == 50)
        try await OpenSockets.waitUntilClosed(inodes: inodes)
    }
}
