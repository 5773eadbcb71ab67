import FuzzSupport
import NIOCore
import TetherCore

/// Input: a configuration byte, up to four delimiter bytes, a maximum length byte, a chunking seed, then the byte
/// stream.
@main
enum FuzzDelimiter {
    static func main() {
        runFuzzer(fuzzDelimiter)
    }
}

func fuzzDelimiter(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let flags = input.byte()
    let candidates = [input.byte(), input.byte(), input.byte(), input.byte()]
    let maxLengthByte = Int(input.byte())
    let seed = input.byte()
    let delimiter: DelimiterFrameCodec.Delimiter =
        switch flags % 8 {
        case 0: .crlf
        case 1: .lf
        case 2: .cr
        case 3: .nul
        default: DelimiterFrameCodec.Delimiter(Array(candidates.prefix(Int(flags % 8) - 3)))
        }
    let codec = DelimiterFrameCodec(
        delimiter: delimiter,
        maxLength: flags & 0x10 == 0 ? maxLengthByte : 16_384,
        includesDelimiter: flags & 0x20 != 0
    )
    let stream = input.rest

    let outcome = outcomeInEveryChunking(codec, stream, seed: seed)

    // Decoded frames re-encode to exactly the bytes consumed (the encoder appends the delimiter a stripped frame
    // lost, and keeps a kept one).
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
        require(decoded.frames.count == 1 && decoded.leftover.isEmpty, "encoded frame does not decode to one frame")
        let body = out.readableBytes - delimiter.bytes.count
        let expected = codec.includesDelimiter ? out.bytes : Array(out.bytes.prefix(body))
        require(decoded.frames[0].bytes == expected, "encoded frame decodes to different bytes")
        require(body <= codec.maxLength, "encoded a frame over maxLength")
    } catch {
        require(out.bytes == [0xEE], "a refused encode appended bytes")
    }
    return 0
}
