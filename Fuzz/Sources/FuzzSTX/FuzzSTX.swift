import FuzzSupport
import NIOCore
import TetherCore

/// Input: a configuration byte, start byte, maximum payload (2 bytes), CRC parameters (3 bytes), a chunking seed,
/// then the byte stream.
@main
enum FuzzSTX {
    static func main() {
        runFuzzer(fuzzSTX)
    }
}

func fuzzSTX(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let flags = input.byte()
    let startByte = input.byte()
    let maxPayloadLength = Int(input.uint16())
    let crc = CRC8(polynomial: input.byte(), initialValue: input.byte(), finalXOR: input.byte())
    let seed = input.byte()
    let checksum: FrameChecksum =
        switch (flags >> 2) % 5 {
        case 0: .none
        case 1: .crc8
        case 2: .crc8(crc)
        case 3: .xor8
        default: .sum8
        }
    let codec = STXFrameCodec(
        startByte: flags & 0x20 == 0 ? 0x02 : startByte,
        endianness: flags & 1 == 0 ? .little : .big,
        checksum: checksum,
        maxPayloadLength: maxPayloadLength,
        resynchronization: flags & 2 == 0 ? .fail : .skipToNextStartByte
    )
    let stream = input.rest

    let outcome = outcomeInEveryChunking(codec, stream, seed: seed) { $0.discardedByteCount }

    // Every decoded frame re-encodes and decodes to itself; without resynchronisation the re-encoded frames are
    // exactly the bytes consumed.
    var reencoded = ByteBuffer()
    for frame in outcome.frames {
        do {
            try codec.encode(frame, into: &reencoded)
        } catch {
            require(false, "a decoded frame does not encode: \(error)")
        }
    }
    if outcome.discarded == 0 {
        require(reencoded.bytes == Array(stream.prefix(stream.count - outcome.leftover.count)), "re-encoding differs")
    }
    let again = drive(codec, reencoded.bytes, chunkSizes: [], discarded: { $0.discardedByteCount })
    require(again.frames == outcome.frames && again.errorCode == nil && again.discarded == 0, "round trip differs")

    // The encoder refuses exactly what the decoder would refuse, and appends nothing when it does.
    let frame = STXFrame(destination: 0x0102, source: 0x0304, bytes: stream)
    var out = ByteBuffer(bytes: [0xEE])
    do {
        try codec.encode(frame, into: &out)
        require(stream.count <= maxPayloadLength, "encoded a payload over maxPayloadLength")
        out.moveReaderIndex(forwardBy: 1)
        let decoded = drive(codec, out.bytes, chunkSizes: [], discarded: { $0.discardedByteCount })
        require(decoded.frames == [frame] && decoded.leftover.isEmpty, "encoded frame does not decode")
    } catch {
        require(stream.count > maxPayloadLength, "refused a payload within maxPayloadLength")
        require(out.bytes == [0xEE], "a refused encode appended bytes")
    }
    return 0
}
