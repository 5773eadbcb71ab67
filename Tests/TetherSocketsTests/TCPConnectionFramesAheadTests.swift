import Foundation
import NIOCore
import Testing
import TetherCore
import TetherSockets

/// A codec outside TetherCore, so that `frames(_:)` takes its generic path: a 1-byte length, then the payload. It
/// counts the frames it decoded, so the iterator's codec state can be checked frame by frame.
private struct CountingByteLengthCodec: FrameCodec {
    var decoded = 0

    func encode(_ frame: ByteBuffer, into buffer: inout ByteBuffer) throws {
        buffer.writeInteger(UInt8(frame.readableBytes))
        buffer.writeImmutableBuffer(frame)
    }

    mutating func decode(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<ByteBuffer> {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
            buffer.readableBytes > Int(length)
        else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 1)
        decoded += 1
        return .frame(buffer.readSlice(length: Int(length))!)
    }
}

/// Frames decoded ahead of the iterator in batches (more frames buffered than one batch holds), for each built-in
/// codec (each has its own specialized path on the event loop) and for a codec of the user's (the generic path).
@Suite(.timeLimit(.minutes(1)))
struct TCPConnectionFramesAheadTests {
    /// More than `DecodedFrames.limit` (1,024), so a step decodes a full batch and a later step another.
    static let count = 2_500

    private static func connect() async throws -> (TCPConnection, RawPeer, RawListener) {
        let listener = try RawListener()
        async let accepted = onThread { listener.accept() }
        let connection = try await TCPConnection.connect(
            host: "127.0.0.1",
            port: Int(listener.port),
            timeout: .seconds(5)
        )
        return (connection, try await accepted, listener)
    }

    private static func payload(_ index: Int) -> ByteBuffer {
        ByteBuffer(string: "frame \(index)")
    }

    /// Sends `wire` in one write, then iterates `codec`'s frames until `count` arrived; returns them as strings.
    private static func receive<Codec: FrameCodec>(
        _ wire: ByteBuffer,
        with codec: Codec,
        check: (Int, Codec) -> Void = { _, _ in }
    ) async throws -> [String] where Codec.Frame == ByteBuffer {
        let (connection, peer, listener) = try await connect()
        defer {
            peer.close()
            listener.close()
        }
        peer.send(Array(wire.readableBytesView))
        var iterator = connection.frames(codec).makeAsyncIterator()
        var received: [String] = []
        while received.count < count, let frame = try await iterator.next() {
            received.append(String(buffer: frame))
            check(received.count, iterator.codec)
        }
        try await connection.close()
        return received
    }

    private static var expected: [String] { (0..<count).map { "frame \($0)" } }

    @Test func lengthFieldFramesArriveInOrderAcrossBatches() async throws {
        let codec = LengthFieldFrameCodec(fieldLength: .two)
        var wire = ByteBuffer()
        for index in 0..<Self.count { try codec.encode(Self.payload(index), into: &wire) }
        #expect(try await Self.receive(wire, with: codec) == Self.expected)
    }

    @Test func delimitedFramesArriveInOrderAcrossBatches() async throws {
        let codec = DelimiterFrameCodec(delimiter: .crlf)
        var wire = ByteBuffer()
        for index in 0..<Self.count { try codec.encode(Self.payload(index), into: &wire) }
        #expect(try await Self.receive(wire, with: codec) == Self.expected)
    }

    @Test func stxFramesArriveInOrderAcrossBatchesWithTheCodecStateOfEachStep() async throws {
        let (connection, peer, listener) = try await Self.connect()
        defer {
            peer.close()
            listener.close()
        }
        // Three garbage bytes before frame 2,000: the codec resynchronises there, inside the second batch. The
        // iterator's codec must show the discarded bytes from that frame on, not from the batch's first frame.
        var wire = ByteBuffer()
        for index in 0..<Self.count {
            if index == 2_000 { wire.writeBytes([0xAA, 0xBB, 0xCC]) }
            let frame = STXFrame(destination: UInt16(index % 65_536), source: 7, bytes: Array("frame \(index)".utf8))
            try STXFrameCodec().encode(frame, into: &wire)
        }
        peer.send(Array(wire.readableBytesView))
        var iterator = connection.frames(STXFrameCodec(resynchronization: .skipToNextStartByte)).makeAsyncIterator()
        var received: [String] = []
        while received.count < Self.count, let frame = try await iterator.next() {
            #expect(iterator.codec.discardedByteCount == (received.count < 2_000 ? 0 : 3))
            received.append(String(decoding: frame.payload.readableBytesView, as: UTF8.self))
        }
        #expect(received == Self.expected)
        try await connection.close()
    }

    @Test func aCodecOfTheUsersTakesTheGenericPathWithTheCodecStateOfEachStep() async throws {
        let codec = CountingByteLengthCodec()
        var wire = ByteBuffer()
        for index in 0..<Self.count { try codec.encode(Self.payload(index), into: &wire) }
        var states: [Int] = []
        let received = try await Self.receive(wire, with: codec) { _, codec in states.append(codec.decoded) }
        #expect(received == Self.expected)
        // After the n-th frame the iterator's codec has decoded exactly n frames, though batches ran ahead.
        #expect(states == Array(1...Self.count))
    }
}
