import NIOCore
import TetherCore

/// A user-written codec for the pipeline tests: fixed two-byte frames, so ``FrameDecoder`` takes its generic path.
struct PairCodec: FrameCodec {
    func encode(_ frame: [UInt8], into buffer: inout ByteBuffer) throws {
        guard frame.count == 2 else {
            throw FramingError(code: .frameTooLarge, message: "pairs only")
        }
        buffer.writeBytes(frame)
    }

    mutating func decode(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<[UInt8]> {
        guard let bytes = buffer.readBytes(length: 2) else {
            return .needMoreData
        }
        return .frame(bytes)
    }
}
