import Foundation
import NIOCore
import Testing
import TetherConcurrency

@testable import TetherSockets

/// A delegate's large `Data` written without a copy (`BorrowedData`): the buffer is the `Data`'s own bytes, the
/// `Data` is kept exactly as long as a buffer over it lives, and neither the caller's later changes nor a buffer that
/// grows can reach the other side.
@Suite(.timeLimit(.minutes(1)))
struct BorrowedDataTests {
    private static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0) &+ seed })
    }

    private static func base(_ data: Data) -> UnsafeRawPointer? {
        data.withUnsafeBytes { $0.baseAddress }
    }

    private static func base(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { $0.baseAddress }
    }

    @Test func aLargeWriteIsABufferOverTheDatasBytesHeldWhileTheBufferLives() {
        let data = Self.bytes(BorrowedData.minimumCount, seed: 1)
        var buffer: ByteBuffer? = BorrowedData.buffer(data)
        #expect(Self.base(buffer!) == Self.base(data))
        #expect(Data(buffer!.readableBytesView) == data)
        #expect(BorrowedData.isBorrowed(data))
        buffer = nil
        #expect(!BorrowedData.isBorrowed(data))
    }

    @Test func aSmallWriteIsCopied() {
        let data = Self.bytes(BorrowedData.minimumCount - 1, seed: 2)
        let buffer = BorrowedData.buffer(data)
        #expect(Self.base(buffer) != Self.base(data))
        #expect(Data(buffer.readableBytesView) == data)
        #expect(!BorrowedData.isBorrowed(data))
    }

    @Test func twoBuffersOverOneDataHoldItUntilBothAreGone() {
        let data = Self.bytes(65_536, seed: 3)
        var first: ByteBuffer? = BorrowedData.buffer(data)
        var second: ByteBuffer? = BorrowedData.buffer(data)
        #expect(Self.base(first!) == Self.base(second!))
        first = nil
        #expect(BorrowedData.isBorrowed(data))
        #expect(Data(second!.readableBytesView) == data)
        second = nil
        #expect(!BorrowedData.isBorrowed(data))
    }

    @Test func aBufferThatGrowsMovesToItsOwnMemoryAndLetsTheDataGo() {
        let data = Self.bytes(65_536, seed: 4)
        var buffer = BorrowedData.buffer(data)
        buffer.writeBytes([0xFE, 0xFF])
        #expect(!BorrowedData.isBorrowed(data))
        #expect(Self.base(buffer) != Self.base(data))
        #expect(Data(buffer.readableBytesView) == data + Data([0xFE, 0xFF]))
        #expect(data == Self.bytes(65_536, seed: 4))
    }

    /// The registry may hold the only reference to the `Data`; a buffer that grows must copy the bytes before it
    /// lets the `Data` go. 40 MiB is above glibc's largest mmap threshold, so freed bytes are unmapped, not reused.
    @Test func aBufferThatGrowsAfterTheCallerDroppedItsDataKeepsTheBytes() {
        let count = 40 << 20
        var buffer = BorrowedData.buffer(Data(repeating: 0x5A, count: count))
        buffer.writeBytes([0xFE])
        #expect(buffer.readableBytes == count + 1)
        let expected = Data(repeating: 0x5A, count: count) + Data([0xFE])
        let same = buffer.withUnsafeReadableBytes { bytes in
            expected.withUnsafeBytes { memcmp(bytes.baseAddress!, $0.baseAddress!, expected.count) == 0 }
        }
        #expect(same)
    }

    @Test func aSliceOfTheBufferKeepsTheDataAfterTheBufferIsGone() {
        let data = Self.bytes(65_536, seed: 5)
        var buffer: ByteBuffer? = BorrowedData.buffer(data)
        let tail = buffer!.getSlice(at: 60_000, length: 5_536)!
        buffer = nil
        #expect(BorrowedData.isBorrowed(data))
        #expect(Data(tail.readableBytesView) == data.suffix(5_536))
    }

    /// Over a socket: the peer gets the bytes as they were when `write` was called, though the caller changed its
    /// `Data` right after; once the write is done and the event loop has moved on, the `Data` is let go.
    @Test func theCallersLaterChangesNeverReachThePeerAndTheDataIsLetGoAfterTheWrite() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        let original = Self.bytes(1 << 20, seed: 6)
        var data = original
        connection.socket.write(data, withTimeout: -1, tag: 7)
        data.resetBytes(in: 0..<data.count)
        let received = try await onThread { connection.peer.receive(count: original.count) }
        #expect(Data(received) == original)
        try await connection.recorder.wait { $0.contains(.wrote(tag: 7)) }
        let loop = connection.socket.state.withLock { $0.adapter!.eventLoop }
        try await loop.submit {}.get()
        #expect(!BorrowedData.isBorrowed(original))
    }

    /// A write the peer never reads, ended by `disconnect()` before it was sent: the `Data` is let go with it.
    @Test func aWriteDroppedByADisconnectLetsTheDataGo() async throws {
        let connection = try await connectToRawPeer()
        defer { connection.close() }
        // 32 MiB: more than the kernel's buffers on both sides hold, so most of it is still queued at the disconnect.
        let data = Data(repeating: 0x77, count: 32 << 20)
        connection.socket.write(data, withTimeout: -1, tag: 1)
        #expect(BorrowedData.isBorrowed(data))
        let loop = connection.socket.state.withLock { $0.adapter!.eventLoop }
        connection.socket.disconnect()
        _ = try await connection.recorder.waitForDisconnect()
        #expect(!connection.recorder.events.contains(.wrote(tag: 1)))
        try await loop.submit {}.get()
        #expect(!BorrowedData.isBorrowed(data))
    }
}
