import NIOCore
import Testing
import TetherCore

/// What decoding a whole byte stream produced.
struct StreamOutcome<Frame: Equatable>: Equatable {
    var frames: [Frame] = []
    /// The code of the error that stopped decoding, if any.
    var errorCode: FramingError.Code?
    /// The bytes still buffered when decoding stopped.
    var leftover: [UInt8] = []
    /// Bytes the codec reported as discarded by resynchronisation.
    var discarded = 0
}

/// How a stream is cut into the chunks fed to the decoder.
enum Chunking: CustomStringConvertible {
    case allAtOnce
    case byteByByte
    case random(seed: UInt64)

    var description: String {
        switch self {
        case .allAtOnce: "all at once"
        case .byteByByte: "byte by byte"
        case .random(let seed): "random chunks (seed \(seed))"
        }
    }

    func chunks(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        switch self {
        case .allAtOnce:
            return [bytes[...]]
        case .byteByByte:
            return bytes.indices.map { bytes[$0...$0] }
        case .random(let seed):
            var rng = SplitMix64(seed: seed)
            var result: [ArraySlice<UInt8>] = []
            var start = 0
            while start < bytes.count {
                let size = min(bytes.count - start, Int.random(in: 1...64, using: &rng))
                result.append(bytes[start..<(start + size)])
                start += size
            }
            return result
        }
    }
}

/// Feeds `chunks` to a copy of `codec` like a `ByteToMessageHandler` does (decode until it wants more data after
/// each chunk, `decodeLast` at the end), checking the `FrameCodec` contract on every call:
/// `.needMoreData` leaves the reader index where it was apart from discarded bytes, and a throw leaves the buffer's
/// readable bytes exactly as they were.
///
/// - Parameter discardedByteCount: reads the codec's resynchronisation counter (0 for codecs without one).
/// - Parameter compactionSeed: when set, the buffer's read bytes are discarded at random moments, as NIO does.
func drive<Codec: FrameCodec>(
    _ codec: Codec,
    chunks: [ArraySlice<UInt8>],
    discardedByteCount: (Codec) -> Int = { _ in 0 },
    compactionSeed: UInt64? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> StreamOutcome<Codec.Frame> where Codec.Frame: Equatable {
    var codec = codec
    var outcome = StreamOutcome<Codec.Frame>()
    var buffer = ByteBuffer()
    var rng = SplitMix64(seed: compactionSeed ?? 0)

    func step(last: Bool) -> Bool {
        let readerIndex = buffer.readerIndex
        let before = Array(buffer.readableBytesView)
        let discardedBefore = discardedByteCount(codec)
        do {
            let result = last ? try codec.decodeLast(from: &buffer) : try codec.decode(from: &buffer)
            let discarded = discardedByteCount(codec) - discardedBefore
            switch result {
            case .frame(let frame):
                outcome.frames.append(frame)
                return true
            case .needMoreData:
                #expect(
                    buffer.readerIndex == readerIndex + discarded,
                    "needMoreData moved the reader index by more than the discarded bytes",
                    sourceLocation: sourceLocation
                )
                return false
            }
        } catch {
            #expect(buffer.readerIndex == readerIndex, "a throw moved the reader index", sourceLocation: sourceLocation)
            #expect(Array(buffer.readableBytesView) == before, sourceLocation: sourceLocation)
            let framingError = error as? FramingError
            #expect(framingError != nil, "unexpected error \(error)", sourceLocation: sourceLocation)
            outcome.errorCode = framingError?.code
            return false
        }
    }

    for chunk in chunks {
        if compactionSeed != nil, Bool.random(using: &rng) {
            buffer.discardReadBytes()
        }
        buffer.writeBytes(chunk)
        // After an error the rest of the stream is only buffered, so `leftover` does not depend on the chunking.
        if outcome.errorCode == nil {
            while step(last: false) {}
        }
    }
    if outcome.errorCode == nil {
        while step(last: true) {}
    }
    outcome.leftover = Array(buffer.readableBytesView)
    outcome.discarded = discardedByteCount(codec)
    return outcome
}

extension ByteBuffer {
    /// The readable bytes as an array.
    var bytes: [UInt8] {
        Array(self.readableBytesView)
    }
}
