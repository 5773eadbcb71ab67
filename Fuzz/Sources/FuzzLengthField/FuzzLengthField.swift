import FuzzSupport
import NIOCore
import TetherCore

/// Input: a configuration byte, a length adjustment byte (signed), a maximum frame length (2 bytes), a chunking
/// seed, then the byte stream.
@main
enum FuzzLengthField {
    static func main() {
        runFuzzer(fuzzLengthField)
    }
}

func fuzzLengthField(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let flags = input.byte()
    let adjustmentByte = Int8(bitPattern: input.byte())
    let maxFrameLength = Int(input.uint16())
    let seed = input.byte()
    let fieldLength = LengthFieldFrameCodec.FieldLength.allCases[Int(flags >> 1) % 4]
    // Extreme adjustments exercise the overflow checks.
    let lengthAdjustment: Int =
        switch (flags >> 3) % 8 {
        case 0: .max
        case 1: .min
        default: Int(adjustmentByte)
        }
    let codec = LengthFieldFrameCodec(
        fieldLength: fieldLength,
        endianness: flags & 1 == 0 ? .big : .little,
        lengthAdjustment: lengthAdjustment,
        maxFrameLength: flags & 0x40 == 0 ? maxFrameLength : .max
    )
    let stream = input.rest

    let outcome = outcomeInEveryChunking(codec, stream, seed: seed)

    // Decoded frames re-encode to exactly the bytes consumed.
    var reencoded = ByteBuffer()
    for frame in outcome.frames {
        do {
            try codec.encode(frame, into: &reencoded)
        } catch {
            require(false, "a decoded frame does not encode: \(error)")
        }
    }
    require(reencoded.bytes == Array(stream.prefix(stream.count - outcome.leftover.count)), "re-encoding differs")

    // The encoder refuses what the decoder would refuse, and appends nothing when it does.
    let frame = ByteBuffer(bytes: stream)
    var out = ByteBuffer(bytes: [0xEE])
    do {
        try codec.encode(frame, into: &out)
        out.moveReaderIndex(forwardBy: 1)
        let decoded = drive(codec, out.bytes, chunkSizes: [], discarded: { _ in 0 })
        require(decoded.frames == [frame] && decoded.leftover.isEmpty, "encoded frame does not decode")
    } catch {
        require(out.bytes == [0xEE], "a refused encode appended bytes")
    }
    return 0
}
