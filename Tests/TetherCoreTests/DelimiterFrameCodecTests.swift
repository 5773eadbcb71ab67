import NIOCore
import Testing
import TetherCore

struct DelimiterFrameCodecTests {
    typealias Delimiter = DelimiterFrameCodec.Delimiter

    private static func decodeAll(
        _ chunks: [[UInt8]],
        _ codec: DelimiterFrameCodec
    ) throws -> (frames: [[UInt8]], rest: [UInt8]) {
        var codec = codec
        var buffer = ByteBuffer()
        var frames: [[UInt8]] = []
        for chunk in chunks {
            buffer.writeBytes(chunk)
            while case .frame(let frame) = try codec.decode(from: &buffer) {
                frames.append(frame.bytes)
            }
        }
        return (frames, buffer.bytes)
    }

    @Test func defaultsAreLFStrippedWith16KiBMaximum() {
        let codec = DelimiterFrameCodec()
        #expect(codec.delimiter == .lf)
        #expect(codec.maxLength == 16_384)
        #expect(codec.includesDelimiter == false)
    }

    @Test func standardDelimitersHaveTheirBytes() {
        #expect(Delimiter.crlf.bytes == [0x0D, 0x0A])
        #expect(Delimiter.lf.bytes == [0x0A])
        #expect(Delimiter.cr.bytes == [0x0D])
        #expect(Delimiter.nul.bytes == [0x00])
    }

    @Test(arguments: [
        Delimiter.crlf, .lf, .cr, .nul, Delimiter([0xDE, 0xAD, 0xBE, 0xEF]), Delimiter(Array("--".utf8)),
    ])
    func everyDelimiterSplitsFramesStrippedAndKept(delimiter: Delimiter) throws {
        let stream = Array("one".utf8) + delimiter.bytes + Array("two".utf8) + delimiter.bytes + delimiter.bytes
        let stripped = try Self.decodeAll([stream], DelimiterFrameCodec(delimiter: delimiter))
        #expect(stripped.frames == [Array("one".utf8), Array("two".utf8), []])
        #expect(stripped.rest == [])
        let kept = try Self.decodeAll([stream], DelimiterFrameCodec(delimiter: delimiter, includesDelimiter: true))
        #expect(
            kept.frames == [Array("one".utf8) + delimiter.bytes, Array("two".utf8) + delimiter.bytes, delimiter.bytes]
        )
    }

    @Test func delimiterSplitAcrossChunksIsFound() throws {
        let codec = DelimiterFrameCodec(delimiter: .crlf)
        let result = try Self.decodeAll([Array("HELO\r".utf8), Array("\nQUIT\r".utf8), [0x0A]], codec)
        #expect(result.frames == [Array("HELO".utf8), Array("QUIT".utf8)])
        let long = Delimiter(Array("<END>".utf8))
        let chunks = [Array("abc<E".utf8), Array("N".utf8), Array("D>def<END".utf8), Array(">".utf8)]
        #expect(
            try Self.decodeAll(chunks, DelimiterFrameCodec(delimiter: long)).frames == [
                Array("abc".utf8), Array("def".utf8),
            ]
        )
    }

    @Test func partialDelimiterPrefixThatDoesNotCompleteIsPartOfTheFrame() throws {
        let codec = DelimiterFrameCodec(delimiter: .crlf)
        let result = try Self.decodeAll([Array("a\r".utf8), Array("b\r\r".utf8), Array("\n".utf8)], codec)
        #expect(result.frames == [Array("a\rb\r".utf8)])
    }

    @Test func overlappingDelimiterCandidatesAreResolvedLeftmost() throws {
        let codec = DelimiterFrameCodec(delimiter: Delimiter(Array("aab".utf8)))
        #expect(try Self.decodeAll([Array("xaaab".utf8)], codec).frames == [Array("xa".utf8)])
        #expect(try Self.decodeAll(Array("xaaab".utf8).map { [$0] }, codec).frames == [Array("xa".utf8)])
    }

    @Test func dripFedLongLineIsDecodedAndRestIsKept() throws {
        var codec = DelimiterFrameCodec(maxLength: 100_000)
        var buffer = ByteBuffer()
        for _ in 0..<50_000 {
            buffer.writeInteger(UInt8(ascii: "x"))
            #expect(try codec.decode(from: &buffer) == .needMoreData)
        }
        #expect(buffer.readerIndex == 0)
        buffer.writeBytes(Array("\nyz".utf8))
        let frame = try codec.decode(from: &buffer)
        #expect(frame == .frame(ByteBuffer(bytes: [UInt8](repeating: UInt8(ascii: "x"), count: 50_000))))
        #expect(buffer.bytes == Array("yz".utf8))
    }

    @Test func searchStartsAgainWhenTheReaderIndexMovedBehindTheCodecsBack() throws {
        var codec = DelimiterFrameCodec()
        var buffer = ByteBuffer(string: "abcdef")
        #expect(try codec.decode(from: &buffer) == .needMoreData)
        // Someone else consumed three bytes; the remembered search offset no longer applies.
        buffer.moveReaderIndex(forwardBy: 3)
        buffer.writeString("x\nmoremore")
        #expect(try codec.decode(from: &buffer) == .frame(ByteBuffer(string: "defx")))
    }

    @Test func compactionBetweenCallsDoesNotLoseADelimiter() throws {
        var codec = DelimiterFrameCodec()
        var buffer = ByteBuffer(string: "one\ntw")
        #expect(try codec.decode(from: &buffer) == .frame(ByteBuffer(string: "one")))
        #expect(try codec.decode(from: &buffer) == .needMoreData)
        buffer.discardReadBytes()  // as ByteToMessageHandler does
        buffer.writeString("o\n")
        #expect(try codec.decode(from: &buffer) == .frame(ByteBuffer(string: "two")))
    }

    @Test func frameOfExactlyMaxLengthSucceedsAndOneMoreFails() throws {
        let codec = DelimiterFrameCodec(delimiter: .crlf, maxLength: 4)
        #expect(try Self.decodeAll([Array("abcd\r\n".utf8)], codec).frames == [Array("abcd".utf8)])
        var decoder = codec
        var buffer = ByteBuffer(string: "abcde\r")
        let error = try #require(throws: FramingError.self) { try decoder.decode(from: &buffer) }
        #expect(error.code == .frameTooLarge)
        #expect(error.bytes?.bytes == Array("abcde\r".utf8))
        #expect(buffer.readerIndex == 0)
    }

    @Test func maxLengthIsJudgedOnlyOnceEnoughBytesAreBuffered() throws {
        var codec = DelimiterFrameCodec(delimiter: .crlf, maxLength: 4)
        var buffer = ByteBuffer()
        for byte in Array("abcde".utf8) {
            buffer.writeInteger(byte)
            #expect(try codec.decode(from: &buffer) == .needMoreData)
        }
        buffer.writeInteger(UInt8(ascii: "\r"))
        expectFramingError(.frameTooLarge) { try codec.decode(from: &buffer) }
        #expect(buffer.readableBytes == 6)
    }

    @Test func zeroLengthFramesAndZeroMaxLength() throws {
        let codec = DelimiterFrameCodec(delimiter: .nul, maxLength: 0)
        #expect(try Self.decodeAll([[0, 0, 0]], codec).frames == [[], [], []])
        expectFramingError(.frameTooLarge) { try Self.decodeAll([[1, 0]], codec) }
    }

    @Test func truncatedFrameAtEndOfStreamThrows() throws {
        var codec = DelimiterFrameCodec()
        var buffer = ByteBuffer(string: "done\nhalf")
        #expect(try codec.decodeLast(from: &buffer) == .frame(ByteBuffer(string: "done")))
        let error = try #require(throws: FramingError.self) { try codec.decodeLast(from: &buffer) }
        #expect(error.code == .truncatedFrame)
        #expect(error.bytes == ByteBuffer(string: "half"))
        #expect(buffer == ByteBuffer(string: "half"))
    }

    @Test func readerIndexIsUnchangedOnPartialInput() throws {
        var codec = DelimiterFrameCodec(delimiter: .crlf)
        var buffer = ByteBuffer(string: "zzabc\r")
        buffer.moveReaderIndex(forwardBy: 2)
        #expect(try codec.decode(from: &buffer) == .needMoreData)
        #expect(buffer.readerIndex == 2)
        #expect(try codec.decode(from: &buffer) == .needMoreData)
        #expect(buffer.readerIndex == 2)
    }

    @Test func encoderAppendsTheDelimiterUnlessTheFrameEndsWithIt() throws {
        let codec = DelimiterFrameCodec(delimiter: .crlf)
        #expect(try codec.encode(ByteBuffer(string: "hi")).bytes == Array("hi\r\n".utf8))
        #expect(try codec.encode(ByteBuffer(string: "hi\r\n")).bytes == Array("hi\r\n".utf8))
        #expect(try codec.encode(ByteBuffer()).bytes == Array("\r\n".utf8))
        #expect(try codec.encode(ByteBuffer(string: "hi\r")).bytes == Array("hi\r\r\n".utf8))
    }

    @Test func encoderRefusesADelimiterInsideTheFrameAndAppendsNothing() throws {
        var out = ByteBuffer(string: "keep")
        let codec = DelimiterFrameCodec(delimiter: .crlf)
        for frame in ["a\r\nb", "a\r\nb\r\n", "\r\n\r\n"] {
            let error = try #require(throws: FramingError.self) {
                try codec.encode(ByteBuffer(string: frame), into: &out)
            }
            #expect(error.code == .delimiterInPayload)
        }
        // An occurrence that straddles the appended delimiter would end the frame early too.
        let overlapping = DelimiterFrameCodec(delimiter: Delimiter(Array("aa".utf8)))
        expectFramingError(.delimiterInPayload) { try overlapping.encode(ByteBuffer(string: "ba"), into: &out) }
        #expect(out == ByteBuffer(string: "keep"))
    }

    @Test func encoderRefusesAFrameOverMaxLengthAndAppendsNothing() throws {
        var out = ByteBuffer(string: "keep")
        let codec = DelimiterFrameCodec(maxLength: 3)
        expectFramingError(.frameTooLarge) { try codec.encode(ByteBuffer(string: "abcd"), into: &out) }
        expectFramingError(.frameTooLarge) { try codec.encode(ByteBuffer(string: "abcd\n"), into: &out) }
        #expect(try codec.encode(ByteBuffer(string: "abc\n")).bytes == Array("abc\n".utf8))
        #expect(out == ByteBuffer(string: "keep"))
    }
}
