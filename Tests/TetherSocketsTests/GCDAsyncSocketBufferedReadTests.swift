import Foundation
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency

@testable import TetherSockets

@Suite(.timeLimit(.minutes(1)))
struct GCDAsyncSocketBufferedReadTests {
    /// A read issued on the delegate queue that the buffered bytes satisfy completes while the event loop is held:
    /// it never went through the loop.
    @Test func aReadThatBufferedBytesSatisfyCompletesWithoutTheEventLoop() async throws {
        // A loop of its own: holding one of the shared group's would stall every other test on it.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await connectToRawPeer(group: group)
        defer {
            connection.close()
            group.shutdownGracefully { _ in }
        }
        let socket = connection.socket
        connection.peer.send("HEADERBODY")
        socket.readData(toLength: 6, withTimeout: -1, tag: 1)
        try await connection.recorder.wait { $0.contains(.read(Data("HEADER".utf8), tag: 1)) }
        let (machine, loop) = socket.state.withLock { ($0.machine!, $0.adapter!.eventLoop) }
        // The rest of the peer's bytes reach the engine's buffer (one send, usually one chunk already).
        while machine.withLock({ $0.reads.bufferedBytes }) < 4 { await Task.yield() }
        let blocker = await LoopBlocker.hold(loop)
        defer { blocker.unblock() }
        connection.recorder.queue.async { socket.readData(toLength: 4, withTimeout: -1, tag: 2) }
        try await connection.recorder.wait { $0.contains(.read(Data("BODY".utf8), tag: 2)) }
    }

    /// The seed's pattern from the delegate queue: a header read, then a body read issued from its callback, and so
    /// on, over frames that arrive in chunks of every size: every frame comes back whole and in order, whether its
    /// read was served from the buffer or queued.
    @Test func headerThenBodyReadsFromTheCallbackKeepTheirOrder() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let frames = (0..<2_000).map { index in
            Array("frame \(index) ".utf8) + Array(repeating: UInt8(index % 251), count: index % 37)
        }
        var stream: [UInt8] = []
        for frame in frames { stream += [UInt8(frame.count >> 8), UInt8(frame.count & 0xFF)] + frame }
        let received = LockedBox<[[UInt8]]>([])
        connection.recorder.onRead = { socket, data, tag in
            if tag == 1 {
                let length = Int(data[data.startIndex]) << 8 | Int(data[data.startIndex + 1])
                socket.readData(toLength: UInt(length), withTimeout: -1, tag: 2)
            } else {
                received.withLock { $0.append(Array(data)) }
                socket.readData(toLength: 2, withTimeout: -1, tag: 1)
            }
        }
        connection.socket.readData(toLength: 2, withTimeout: -1, tag: 1)
        var offset = 0
        var chunk = 1
        while offset < stream.count {
            let end = min(stream.count, offset + chunk)
            connection.peer.send(Array(stream[offset..<end]))
            offset = end
            chunk = chunk % 977 + 13
        }
        try await connection.recorder.wait(timeout: .seconds(30)) { events in
            events.filter { if case .read(_, tag: 2) = $0 { true } else { false } }.count == frames.count
        }
        #expect(received.withLock { $0 } == frames)
        #expect(connection.recorder.violations.isEmpty)
    }
}
