import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TetherConcurrency

@testable import TetherSockets

/// Holds an event loop until released, so that a test can tell what a write does without it.
///
/// Only ever a loop of the test's own group: tests run in parallel, and holding a loop of the shared group would
/// stall every other test's sockets on it (their timers fire once it runs again) for as long as this test's tasks
/// wait for a thread of the cooperative pool.
final class LoopBlocker: Sendable {
    private let release = DispatchSemaphore(value: 0)

    private init() {}

    /// Returns once `loop` is held.
    static func hold(_ loop: any EventLoop) async -> LoopBlocker {
        let blocker = LoopBlocker()
        await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
            loop.execute { [release = blocker.release] in
                held.resume()
                release.wait()
            }
        }
        return blocker
    }

    func unblock() { release.signal() }
}

/// True once `flag` is set, polling up to `limit`.
private func becomesTrue(_ flag: LockedBoxFlag, within limit: Duration) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if flag.value { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return flag.value
}

private final class LockedBoxFlag: Sendable {
    private let box = LockedBox(false)
    var value: Bool { box.withLock { $0 } }
    func set() { box.withLock { $0 = true } }
}

/// The async face's write contract: a write returns once queued with less than the window ahead of it.
@Suite(.timeLimit(.minutes(1)))
struct TCPConnectionWriteWindowTests {
    static let chunk = ByteBuffer(repeating: 0x5A, count: 64 * 1024)

    /// Holds the connection's event loop, then writes chunks until the window is full: only the window's fast path
    /// can let these writes return. Returns the blocker (to release the loop) and the number of chunks written.
    static func fillTheWindowWithTheLoopHeld(_ connection: TCPConnection) async throws -> (LoopBlocker, Int) {
        let blocker = await LoopBlocker.hold(connection.channel.eventLoop)
        let count = WriteAdmission.limit / Self.chunk.readableBytes
        for _ in 0..<count { try await connection.write(Self.chunk) }
        return (blocker, count)
    }

    @Test func writesWithinTheWindowReturnWithoutTheEventLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (connection, peer, listener) = try await connectAsyncToRawPeer(on: group)
        defer {
            peer.close()
            listener.close()
        }
        let (blocker, count) = try await Self.fillTheWindowWithTheLoopHeld(connection)
        blocker.unblock()
        let received = try await onThread { peer.receive(count: count * 64 * 1024) }
        #expect(received.count == count * 64 * 1024)
        try await connection.close()
        try await group.shutdownGracefully()
    }

    @Test func aWriteBeyondTheWindowWaitsUntilBytesDrain() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (connection, peer, listener) = try await connectAsyncToRawPeer(on: group)
        defer {
            peer.close()
            listener.close()
        }
        let (blocker, count) = try await Self.fillTheWindowWithTheLoopHeld(connection)
        let returned = LockedBoxFlag()
        let next = Task {
            try await connection.write(Self.chunk)
            returned.set()
        }
        #expect(try await !becomesTrue(returned, within: .milliseconds(200)))
        blocker.unblock()
        // The peer reads, the window drains, the next write returns.
        let received = try await onThread { peer.receive(count: (count + 1) * 64 * 1024) }
        try await next.value
        #expect(received.count == (count + 1) * 64 * 1024)
        try await connection.close()
        try await group.shutdownGracefully()
    }

    @Test func aWriteThatTimesOutWaitingForRoomStillGoesOutInOrder() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        // The peer does not read: the kernel's buffers fill, then the window; a write then times out.
        var written = 0
        var index: UInt8 = 0
        var timedOut = false
        while !timedOut, written < 64 << 20 {
            let chunk = ByteBuffer(repeating: index, count: 64 * 1024)
            do {
                try await connection.write(chunk, timeout: .milliseconds(100))
            } catch let error as GCDAsyncSocketError {
                #expect(error.code == .writeTimeout)
                timedOut = true
            }
            written += chunk.readableBytes
            index &+= 1
        }
        #expect(timedOut)
        // The timed-out write's bytes stay queued: the peer gets every byte, chunk by chunk in order, then the end.
        let closing = Task { try await connection.close() }
        let received = try await onThread { peer.receiveToEnd() }
        try await closing.value
        #expect(received.count == written)
        let ordered = stride(from: 0, to: received.count, by: 64 * 1024).allSatisfy { offset in
            received[offset] == UInt8(truncatingIfNeeded: offset / (64 * 1024))
        }
        #expect(ordered)
    }

    @Test func closeSendsEveryAcceptedByteFirst() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        let total = 4 << 20
        let reading = Task { try await onThread { peer.receiveToEnd() } }
        for _ in 0..<(total / Self.chunk.readableBytes) { try await connection.write(Self.chunk) }
        try await connection.close()
        #expect(try await reading.value.count == total)
        await #expect(throws: GCDAsyncSocketError.self) { try await connection.write(Self.chunk) }
    }

    @Test func closeGivesUpOnAPeerThatStopsReadingAndSaysSo() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        peer.shrinkReceiveBuffer()
        let engine = connection.engine
        try await connection.channel.eventLoop.submit { engine.value.closeLinger = .milliseconds(300) }.get()
        // Fill the kernel's buffers and the window.
        while true {
            do {
                try await connection.write(Self.chunk, timeout: .milliseconds(100))
            } catch {
                break
            }
        }
        let error = await #expect(throws: GCDAsyncSocketError.self) { try await connection.close() }
        #expect(error?.code == .writeTimeout)
        // Closed all the same.
        try await connection.close()
        await #expect(throws: GCDAsyncSocketError.self) { _ = try await connection.read(toLength: 1) }
    }

    @Test func anIOErrorAfterAWriteReturnedSurfacesAtTheNextOperation() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer { listener.close() }
        peer.reset()
        // Writes keep being accepted until the reset reaches the connection; then the next one throws.
        var thrown: GCDAsyncSocketError?
        for _ in 0..<10_000 {
            do {
                try await connection.write(Self.chunk)
            } catch let error as GCDAsyncSocketError {
                thrown = error
                break
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        let error = try #require(thrown)
        // The reset itself (ECONNRESET/EPIPE), not a bare "closed" that would hide why.
        #expect(error.code == .other)
        #expect(error.domain == .posix)
        try await connection.close()
    }

    @Test func operationsAfterCloseThrowClosedAlsoWhenAnIOErrorEndedTheConnectionFirst() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer { listener.close() }
        // A read that waits when the reset arrives throws the reset itself.
        async let pending = connection.read(toLength: 1)
        peer.reset()
        do {
            _ = try await pending
            Issue.record("the read returned after a reset")
        } catch let error as GCDAsyncSocketError {
            #expect(error.domain == .posix)
        }
        try await connection.close()
        // After the caller's close, every operation answers `.closed`, whatever ended the connection before.
        for operation in [
            { _ = try await connection.read(toLength: 1) },
            { _ = try await connection.readAvailable() },
            { try await connection.write(ByteBuffer(string: "x")) },
        ] as [@Sendable () async throws -> Void] {
            do {
                try await operation()
                Issue.record("an operation after close() succeeded")
            } catch let error as GCDAsyncSocketError {
                #expect(error.code == .closed, "\(error)")
            }
        }
    }

    @Test func aWriteAfterHalfCloseFailsAndReadingGoesOn() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        try await connection.write(ByteBuffer(string: "bye"))
        try await connection.halfClose()
        let error = await #expect(throws: GCDAsyncSocketError.self) {
            try await connection.write(ByteBuffer(string: "late"))
        }
        #expect(error?.code == .closed)
        #expect(try await onThread { peer.receiveToEnd() } == Array("bye".utf8))
        peer.send("still here")
        let line = try await connection.read(toLength: 10, timeout: .seconds(5))
        #expect(String(buffer: line) == "still here")
        try await connection.close()
    }
}

extension TCPConnectionWriteWindowTests {
    @Test func cancellingAWaitingCloseClosesAtOnce() async throws {
        let (connection, peer, listener) = try await connectAsyncToRawPeer()
        defer {
            peer.close()
            listener.close()
        }
        peer.shrinkReceiveBuffer()
        // Fill the kernel's buffers and the window: a close now waits for bytes the peer will not take.
        while true {
            do {
                try await connection.write(Self.chunk, timeout: .milliseconds(100))
            } catch {
                break
            }
        }
        let closing = Task { try await connection.close() }
        try await Task.sleep(for: .milliseconds(100))
        closing.cancel()
        await #expect(throws: CancellationError.self) { try await closing.value }
        await #expect(throws: GCDAsyncSocketError.self) { _ = try await connection.read(toLength: 1) }
    }
}
