import Foundation
import NIOCore
import NIOFoundationCompat

extension ByteBuffer {
    /// Reads at least this long are handed to the delegate without a copy.
    static let deliveredWithoutCopy = 4096

    /// A completed read's bytes as the `Data` a delegate receives; the delegate owns them either way.
    ///
    /// A large read is not copied: the `Data` keeps the buffer's storage alive instead, and the engine, whose receive
    /// buffer may share that storage, never writes into it again (a `ByteBuffer` copies shared storage before it
    /// writes), so the bytes cannot change under the delegate. A small read, or one that fills less than a quarter
    /// of its storage (reads grow to ``ReceiveSizing/maximumRead``), is copied, so that a few bytes do not pin a
    /// whole receive buffer while the delegate keeps them.
    var deliveredData: Data {
        let count = readableBytes
        let pins = count >= Self.deliveredWithoutCopy && count >= storageCapacity / 4
        return getData(at: readerIndex, length: count, byteTransferStrategy: pins ? .noCopy : .copy)!
    }
}
