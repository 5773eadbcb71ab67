import Foundation
import NIOCore
import Testing

@testable import TetherSockets

/// A completed read's bytes as the delegate receives them (`ByteBuffer.deliveredData`): large reads without a copy,
/// small ones copied, and neither changed by what the engine writes into its receive buffer afterwards.
struct DeliveredDataTests {
    /// The engine's receive buffer after a read of `count` bytes of 0x11 was taken off it, the read's `Data`, and
    /// whether that `Data` points into the buffer's storage. The read's slice is gone when this returns: only the
    /// `Data` can keep the storage from being written.
    private func read(_ count: Int) -> (receive: ByteBuffer, data: Data, sharesStorage: Bool) {
        var receive = ByteBufferAllocator().buffer(capacity: 2 * count)
        receive.writeRepeatingByte(0x11, count: count)
        let slice = receive.readSlice(length: count)!
        let data = slice.deliveredData
        let shared = slice.withUnsafeReadableBytes { buffer in
            data.withUnsafeBytes { $0.baseAddress == buffer.baseAddress }
        }
        return (receive, data, shared)
    }

    @Test(arguments: [ByteBuffer.deliveredWithoutCopy, 65_536])
    func aLargeReadIsNotCopiedAndTheEngineNeverWritesUnderIt(count: Int) {
        var (receive, data, sharesStorage) = self.read(count)
        #expect(sharesStorage)
        // The engine reuses its buffer from the start; the storage is shared with the Data, so it copies first.
        receive.clear()
        receive.writeRepeatingByte(0x22, count: count)
        #expect(data == Data(repeating: 0x11, count: count))
    }

    @Test(arguments: [1, ByteBuffer.deliveredWithoutCopy - 1])
    func aSmallReadIsCopied(count: Int) {
        var (receive, data, sharesStorage) = self.read(count)
        #expect(!sharesStorage)
        receive.clear()
        receive.writeRepeatingByte(0x22, count: count)
        #expect(data == Data(repeating: 0x11, count: count))
    }
}
