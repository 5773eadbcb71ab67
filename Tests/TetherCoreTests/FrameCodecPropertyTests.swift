import NIOCore
import Testing
import TetherCore

/// Seeded property tests: thousands of random frames per codec, fed all at once, byte by byte and in random chunks
/// (with random buffer compaction), must give identical frames; `drive` checks the reader-index contract on every call.
struct FrameCodecPropertyTests {
    private static let streamCount = 150
    private static let framesPerStream = 1...40

    private static func chunkings(_ rng: inout SplitMix64) -> [Chunking] {
        [.allAtOnce, .byteByByte, .random(seed: rng.next()), .random(seed: rng.next())]
    }

    /// Decodes `stream` in every chunking and checks all outcomes are the same; returns that outcome.
    private static func outcomeInEveryChunking<Codec: FrameCodec>(
        _ codec: Codec,
        _ stream: [UInt8],
        _ rng: inout SplitMix64,
        discardedByteCount: (Codec) -> Int = { _ in 0 },
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> StreamOutcome<Codec.Frame> where Codec.Frame: Equatable {
        var first: StreamOutcome<Codec.Frame>?
        for chunking in Self.chunkings(&rng) {
            let compaction: UInt64? = if case .random(let seed) = chunking { seed } else { nil }
            let outcome = drive(
                codec,
                chunks: chunking.chunks(of: stream),
                discardedByteCount: discardedByteCount,
                compactionSeed: compaction,
                sourceLocation: sourceLocation
            )
            if let first {
                #expect(outcome == first, "\(chunking) differs from all at once", sourceLocation: sourceLocation)
            } else {
                first = outcome
            }
        }
        return first!
    }

    // MARK: - STX

    private static func randomChecksum(_ rng: inout SplitMix64) -> FrameChecksum {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: .none
        case 1: .crc8
        case 2:
            .crc8(
                CRC8(
                    polynomial: .random(in: 0...255, using: &rng),
                    initialValue: .random(in: 0...255, using: &rng),
                    finalXOR: .random(in: 0...255, using: &rng)
                )
            )
        case 3: .xor8
        default: .sum8
        }
    }

    private static func randomSTXCodec(
        _ rng: inout SplitMix64,
        resynchronization: STXFrameCodec.Resynchronization
    ) -> STXFrameCodec {
        STXFrameCodec(
            startByte: Bool.random(using: &rng) ? 0x02 : .random(in: 0...255, using: &rng),
            endianness: Bool.random(using: &rng) ? .little : .big,
            checksum: Self.randomChecksum(&rng),
            maxPayloadLength: Bool.random(using: &rng) ? 65_535 : .random(in: 0...300, using: &rng),
            resynchronization: resynchronization
        )
    }

    private static func randomSTXFrames(_ codec: STXFrameCodec, _ rng: inout SplitMix64) -> [STXFrame] {
        (0..<Int.random(in: Self.framesPerStream, using: &rng)).map { _ in
            let limit = min(codec.maxPayloadLength, 300)
            let length = Int.random(in: 0..<8, using: &rng) == 0 ? limit : .random(in: 0...min(limit, 40), using: &rng)
            return STXFrame(
                destination: .random(in: 0...UInt16.max, using: &rng),
                source: .random(in: 0...UInt16.max, using: &rng),
                bytes: rng.bytes(length)
            )
        }
    }

    @Test func stxFramesDecodeIdenticallyInAnyChunking() throws {
        var rng = SplitMix64(seed: 0x5778_0001)
        var frameCount = 0
        for _ in 0..<Self.streamCount {
            let codec = Self.randomSTXCodec(
                &rng,
                resynchronization: Bool.random(using: &rng) ? .fail : .skipToNextStartByte
            )
            let frames = Self.randomSTXFrames(codec, &rng)
            var stream = ByteBuffer()
            for frame in frames {
                try codec.encode(frame, into: &stream)
            }
            let outcome = Self.outcomeInEveryChunking(codec, stream.bytes, &rng) { $0.discardedByteCount }
            #expect(outcome.frames == frames)
            #expect(outcome.errorCode == nil)
            #expect(outcome.leftover == [])
            #expect(outcome.discarded == 0)
            frameCount += frames.count
        }
        #expect(frameCount > 2_000)
    }

    @Test func stxStreamsWithGarbageResynchroniseIdenticallyInAnyChunking() throws {
        var rng = SplitMix64(seed: 0x5778_0002)
        var recovered = 0
        var sent = 0
        for _ in 0..<Self.streamCount {
            let codec = Self.randomSTXCodec(&rng, resynchronization: .skipToNextStartByte)
            let frames = Self.randomSTXFrames(codec, &rng)
            var stream: [UInt8] = []
            for frame in frames {
                var garbage = rng.bytes(Int.random(in: 0...12, using: &rng))
                if !garbage.isEmpty && Bool.random(using: &rng) {
                    garbage[Int.random(in: garbage.indices, using: &rng)] = codec.startByte
                }
                stream += garbage
                stream += try codec.encode(frame).bytes
            }
            let outcome = Self.outcomeInEveryChunking(codec, stream, &rng) { $0.discardedByteCount }
            // Only the end of the stream can hold a start byte with too few bytes after it.
            #expect(outcome.errorCode == nil || outcome.errorCode == .truncatedFrame)
            #expect(outcome.discarded + outcome.frames.count > 0 || stream.isEmpty)
            recovered += frames.filter { outcome.frames.contains($0) }.count
            sent += frames.count
        }
        // False starts can swallow a real frame only when garbage passes the checksum; most frames survive.
        #expect(recovered * 10 > sent * 7, "recovered \(recovered) of \(sent)")
    }

    @Test func corruptedSTXStreamsFailIdenticallyInAnyChunking() throws {
        var rng = SplitMix64(seed: 0x5778_0003)
        for _ in 0..<Self.streamCount {
            let codec = Self.randomSTXCodec(&rng, resynchronization: .fail)
            let frames = Self.randomSTXFrames(codec, &rng)
            var stream = ByteBuffer()
            for frame in frames {
                try codec.encode(frame, into: &stream)
            }
            var bytes = stream.bytes
            bytes[Int.random(in: bytes.indices, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            let outcome = Self.outcomeInEveryChunking(codec, bytes, &rng)
            #expect(outcome.frames.count <= frames.count)
            #expect(outcome.frames == Array(frames.prefix(outcome.frames.count)) || codec.checksum == .none)
        }
    }

    // MARK: - Length field

    @Test func lengthFieldFramesDecodeIdenticallyInAnyChunking() throws {
        var rng = SplitMix64(seed: 0x1E46_0001)
        var frameCount = 0
        for _ in 0..<Self.streamCount {
            let codec = LengthFieldFrameCodec(
                fieldLength: LengthFieldFrameCodec.FieldLength.allCases.randomElement(using: &rng)!,
                endianness: Bool.random(using: &rng) ? .big : .little,
                lengthAdjustment: .random(in: -4...4, using: &rng),
                maxFrameLength: Bool.random(using: &rng) ? 8_388_608 : .random(in: 0...300, using: &rng)
            )
            var frames: [ByteBuffer] = []
            var stream = ByteBuffer()
            for _ in 0..<Int.random(in: Self.framesPerStream, using: &rng) {
                let limit = min(codec.maxFrameLength, 300)
                let length =
                    Int.random(in: 0..<8, using: &rng) == 0 ? limit : .random(in: 0...min(limit, 40), using: &rng)
                let frame = ByteBuffer(bytes: rng.bytes(length))
                do {
                    try codec.encode(frame, into: &stream)
                    frames.append(frame)
                } catch let error as FramingError {
                    // Only lengths the adjustment makes negative or the 1-byte field cannot carry are refused.
                    #expect(error.code == .invalidLength || error.code == .frameTooLarge)
                }
            }
            let outcome = Self.outcomeInEveryChunking(codec, stream.bytes, &rng)
            #expect(outcome.frames == frames)
            #expect(outcome.errorCode == nil)
            #expect(outcome.leftover == [])
            frameCount += frames.count
        }
        #expect(frameCount > 2_000)
    }

    @Test func randomBytesThroughTheLengthFieldCodecGiveIdenticalOutcomes() {
        var rng = SplitMix64(seed: 0x1E46_0002)
        for _ in 0..<Self.streamCount {
            let codec = LengthFieldFrameCodec(
                fieldLength: LengthFieldFrameCodec.FieldLength.allCases.randomElement(using: &rng)!,
                endianness: Bool.random(using: &rng) ? .big : .little,
                lengthAdjustment: .random(in: -4...4, using: &rng),
                maxFrameLength: .random(in: 0...64, using: &rng)
            )
            _ = Self.outcomeInEveryChunking(codec, rng.bytes(.random(in: 0...200, using: &rng)), &rng)
        }
    }

    // MARK: - Delimiter

    private static func randomDelimiterCodec(_ rng: inout SplitMix64) -> DelimiterFrameCodec {
        let standard: [DelimiterFrameCodec.Delimiter] = [.crlf, .lf, .cr, .nul]
        let delimiter =
            Bool.random(using: &rng)
            ? standard.randomElement(using: &rng)!
            : DelimiterFrameCodec.Delimiter(
                (0..<Int.random(in: 1...4, using: &rng)).map { _ in .random(in: 0...3, using: &rng) }
            )
        return DelimiterFrameCodec(
            delimiter: delimiter,
            maxLength: Bool.random(using: &rng) ? 16_384 : .random(in: 0...64, using: &rng),
            includesDelimiter: Bool.random(using: &rng)
        )
    }

    @Test func delimitedFramesDecodeIdenticallyInAnyChunking() throws {
        var rng = SplitMix64(seed: 0xDE11_0001)
        var frameCount = 0
        for _ in 0..<Self.streamCount {
            let codec = Self.randomDelimiterCodec(&rng)
            let delimiter = codec.delimiter.bytes
            // A small alphabet that shares bytes with the delimiters makes near misses and split delimiters common.
            let alphabet: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0x0A, 0x0D, 0x41]
            var expected: [ByteBuffer] = []
            var stream = ByteBuffer()
            for _ in 0..<Int.random(in: Self.framesPerStream, using: &rng) {
                let length = Int.random(in: 0...min(codec.maxLength, 48), using: &rng)
                let frame = ByteBuffer(bytes: (0..<length).map { _ in alphabet.randomElement(using: &rng)! })
                do {
                    let encoded = try codec.encode(frame)
                    stream.writeImmutableBuffer(encoded)
                    let body = encoded.getSlice(
                        at: encoded.readerIndex,
                        length: encoded.readableBytes - delimiter.count
                    )!
                    expected.append(codec.includesDelimiter ? encoded : body)
                } catch let error as FramingError {
                    #expect(error.code == .delimiterInPayload)
                }
            }
            let outcome = Self.outcomeInEveryChunking(codec, stream.bytes, &rng)
            #expect(outcome.frames == expected)
            #expect(outcome.errorCode == nil)
            #expect(outcome.leftover == [])
            frameCount += expected.count
        }
        #expect(frameCount > 1_000)
    }

    @Test func randomBytesThroughTheDelimiterCodecGiveIdenticalOutcomes() {
        var rng = SplitMix64(seed: 0xDE11_0002)
        for _ in 0..<Self.streamCount {
            let codec = Self.randomDelimiterCodec(&rng)
            let stream = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...4, using: &rng) }
            _ = Self.outcomeInEveryChunking(codec, stream, &rng)
        }
    }
}
