public import NIOCore

/// The codec for the seed's framed protocol: a start byte, 2-byte destination and source addresses, a 2-byte payload
/// length, the payload and a 0- or 1-byte checksum.
///
/// | Offset | Size | Field |
/// |---|---|---|
/// | 0 | 1 | start byte (``startByte``, default `0x02`) |
/// | 1 | 2 | destination (byte order ``endianness``, default little) |
/// | 3 | 2 | source |
/// | 5 | 2 | payload length `len` |
/// | 7 | `len` | payload |
/// | 7+`len` | 0 or 1 | checksum (``checksum``, default CRC-8 poly `0x07`) over bytes `0 ..< 7+len` |
///
/// Destination 1, source 2, payload `"hi"` with the defaults is `02 01 00 02 00 02 00 68 69 DA`.
///
/// ``decode(from:)`` works in these steps:
/// 1. First byte ≠ ``startByte``: ``Resynchronization/fail`` throws ``FramingError/Code-swift.struct/badStartByte``;
///    ``Resynchronization/skipToNextStartByte`` discards the bytes up to the next start byte (or all) and goes on.
/// 2. Fewer than 7 bytes: ``FrameDecodingResult/needMoreData``.
/// 3. `len > maxPayloadLength`: fail throws ``FramingError/Code-swift.struct/frameTooLarge`` at once, before any
///    payload arrives; skip discards the start byte and resynchronises.
/// 4. Fewer than `7 + len + checksum.byteCount` bytes: ``FrameDecodingResult/needMoreData``.
/// 5. Checksum mismatch: fail throws ``FramingError/Code-swift.struct/checksumMismatch`` with the whole frame
///    attached; skip discards the start byte and resynchronises.
/// 6. The frame is consumed and returned; its payload is a slice of the buffer, not a copy.
///
/// The codec never allocates by a length it has read: a header announcing 60 000 bytes costs nothing until they
/// arrive. With ``Resynchronization/skipToNextStartByte``, ``decodeLast(from:)`` also resynchronises past a start
/// byte whose frame the stream ended inside, so real frames after a false start are not lost; it throws
/// ``FramingError/Code-swift.struct/truncatedFrame`` only when no frame can be found in the bytes left over.
public struct STXFrameCodec: FrameCodec {
    /// The codec decodes and encodes ``STXFrame`` values.
    public typealias Frame = STXFrame

    /// The length of the fixed header: start byte, destination, source and length field (7).
    public static let headerLength: Int = 7

    /// The first byte of every frame. Default `0x02` (STX).
    public var startByte: UInt8
    /// The byte order of destination, source and length. Default `.little` (the seed reads `OSReadLittleInt16`).
    public var endianness: Endianness
    /// The trailer after the payload. Default ``FrameChecksum/crc8``.
    public var checksum: FrameChecksum
    /// The largest payload the codec decodes or encodes. Default 65 535.
    ///
    /// - Precondition: `0...65_535`.
    public var maxPayloadLength: Int {
        didSet {
            Self.checkMaxPayloadLength(self.maxPayloadLength)
        }
    }
    /// What ``decode(from:)`` does with bytes that are not a valid frame. Default ``Resynchronization/fail``.
    public var resynchronization: Resynchronization

    private var discarded: Int = 0

    /// The number of bytes ``Resynchronization/skipToNextStartByte`` has skipped so far.
    public var discardedByteCount: Int {
        self.discarded
    }

    /// Creates an STX codec.
    ///
    /// - Parameters:
    ///   - startByte: The first byte of every frame.
    ///   - endianness: The byte order of destination, source and length.
    ///   - checksum: The trailer after the payload.
    ///   - maxPayloadLength: The largest payload accepted; must be in `0...65_535`.
    ///   - resynchronization: What to do with bytes that are not a valid frame.
    public init(
        startByte: UInt8 = 0x02,
        endianness: Endianness = .little,
        checksum: FrameChecksum = .crc8,
        maxPayloadLength: Int = 65_535,
        resynchronization: Resynchronization = .fail
    ) {
        Self.checkMaxPayloadLength(maxPayloadLength)
        self.startByte = startByte
        self.endianness = endianness
        self.checksum = checksum
        self.maxPayloadLength = maxPayloadLength
        self.resynchronization = resynchronization
    }

    /// What the decoder does with bytes that are not a valid frame.
    public struct Resynchronization: Sendable, Hashable {
        private enum Policy: Sendable, Hashable {
            case fail
            case skip
        }

        private let policy: Policy

        private init(_ policy: Policy) {
            self.policy = policy
        }

        /// Throw a ``FramingError``; the bytes stay in the buffer. Corruption is surfaced, never hidden.
        public static let fail = Resynchronization(.fail)
        /// Discard bytes up to the next start byte and go on decoding, counting them in
        /// ``STXFrameCodec/discardedByteCount``.
        public static let skipToNextStartByte = Resynchronization(.skip)

        var skips: Bool {
            self.policy == .skip
        }
    }

    /// Appends one frame's wire bytes: header, payload and checksum.
    ///
    /// - Parameters:
    ///   - frame: The frame; its payload's readable bytes are sent.
    ///   - buffer: The buffer to append to; unchanged if this throws.
    /// - Throws: ``FramingError/Code-swift.struct/frameTooLarge`` when the payload is longer than
    ///   ``maxPayloadLength``; nothing is appended.
    public func encode(_ frame: STXFrame, into buffer: inout ByteBuffer) throws {
        let length = frame.payload.readableBytes
        guard length <= self.maxPayloadLength else {
            throw FramingError(
                code: .frameTooLarge,
                message: "payload of \(length) bytes exceeds maxPayloadLength \(self.maxPayloadLength)"
            )
        }
        let frameStart = buffer.writerIndex
        buffer.reserveCapacity(minimumWritableBytes: Self.headerLength + length + self.checksum.byteCount)
        buffer.writeInteger(self.startByte)
        buffer.writeInteger(frame.destination, endianness: self.endianness)
        buffer.writeInteger(frame.source, endianness: self.endianness)
        buffer.writeInteger(UInt16(truncatingIfNeeded: length), endianness: self.endianness)
        buffer.writeImmutableBuffer(frame.payload)
        if self.checksum.byteCount != 0 {
            // The frame starts `frameStart - readerIndex` bytes into the readable bytes.
            let offset = frameStart - buffer.readerIndex
            let value = buffer.withUnsafeReadableBytes { readable in
                self.checksum.compute(UnsafeRawBufferPointer(rebasing: readable[offset...]))
            }
            buffer.writeInteger(value)
        }
    }

    /// Decodes one frame from the start of the readable bytes, following steps (1)–(6) in the type's overview.
    ///
    /// - Parameter buffer: The bytes received so far.
    /// - Returns: A frame (its bytes consumed), or ``FrameDecodingResult/needMoreData`` (reader index unchanged apart
    ///   from bytes discarded by ``Resynchronization/skipToNextStartByte``).
    /// - Throws: With ``Resynchronization/fail``: ``FramingError/Code-swift.struct/badStartByte`` (up to 16 bytes
    ///   attached), ``FramingError/Code-swift.struct/frameTooLarge`` (the header attached),
    ///   ``FramingError/Code-swift.struct/checksumMismatch`` (the whole frame attached); the reader index is unchanged.
    public mutating func decode(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<STXFrame> {
        while true {
            let start = buffer.readerIndex
            let readable = buffer.readableBytes
            guard readable > 0 else {
                return .needMoreData
            }
            // (1) start byte
            if buffer.getInteger(at: start, as: UInt8.self)! != self.startByte {
                guard self.resynchronization.skips else {
                    throw self.badStartByte(buffer)
                }
                let skipped = buffer.withUnsafeReadableBytes { bytes in
                    ByteSearch.firstIndex(of: self.startByte, in: bytes, from: 1, to: readable) ?? readable
                }
                self.discard(skipped, from: &buffer)
                continue
            }
            // (2) header
            guard readable >= Self.headerLength else {
                return .needMoreData
            }
            let length = Int(buffer.getInteger(at: start + 5, endianness: self.endianness, as: UInt16.self)!)
            // (3) announced length
            if length > self.maxPayloadLength {
                guard self.resynchronization.skips else {
                    throw FramingError(
                        code: .frameTooLarge,
                        message:
                            "header announces \(length) payload bytes, maxPayloadLength is \(self.maxPayloadLength)",
                        bytes: buffer.getSlice(at: start, length: Self.headerLength)
                    )
                }
                self.discard(1, from: &buffer)
                continue
            }
            // (4) whole frame
            let checkedLength = Self.headerLength + length
            guard readable >= checkedLength + self.checksum.byteCount else {
                return .needMoreData
            }
            // (5) checksum over bytes 0 ..< 7+len
            if self.checksum.byteCount != 0 {
                let expected = buffer.withUnsafeReadableBytes { bytes in
                    self.checksum.compute(UnsafeRawBufferPointer(rebasing: bytes[..<checkedLength]))
                }
                let received = buffer.getInteger(at: start + checkedLength, as: UInt8.self)!
                if received != expected {
                    guard self.resynchronization.skips else {
                        throw FramingError(
                            code: .checksumMismatch,
                            message: "checksum \(received.hexLiteral), expected \(expected.hexLiteral)",
                            bytes: buffer.getSlice(at: start, length: checkedLength + 1)
                        )
                    }
                    self.discard(1, from: &buffer)
                    continue
                }
            }
            // (6) consume
            let destination = buffer.getInteger(at: start + 1, endianness: self.endianness, as: UInt16.self)!
            let source = buffer.getInteger(at: start + 3, endianness: self.endianness, as: UInt16.self)!
            buffer.moveReaderIndex(forwardBy: Self.headerLength)
            let payload = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: self.checksum.byteCount)
            return .frame(STXFrame(destination: destination, source: source, payload: payload))
        }
    }

    /// Decodes one frame at the end of the stream.
    ///
    /// With ``Resynchronization/fail`` this is ``decode(from:)`` that throws
    /// ``FramingError/Code-swift.struct/truncatedFrame`` when bytes remain. With
    /// ``Resynchronization/skipToNextStartByte`` a start byte whose frame the stream ended inside is treated as
    /// garbage if a valid frame starts after it: that frame is returned and the skipped bytes are counted.
    ///
    /// - Parameter buffer: The bytes left over at the end of the stream.
    /// - Returns: A frame, or ``FrameDecodingResult/needMoreData`` when no bytes are left.
    /// - Throws: ``FramingError/Code-swift.struct/truncatedFrame`` with all left-over bytes attached (including
    ///   garbage before the cut-off frame); the reader index and ``discardedByteCount`` are unchanged. Or what
    ///   ``decode(from:)`` throws.
    public mutating func decodeLast(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<STXFrame> {
        // Work on copies (the storage is shared, only indices move) and commit only a result: a throw must leave
        // the buffer and the discard counter as they were, even if garbage was skipped on the way.
        var probe = buffer
        var probeCodec = self
        let result = try probeCodec.decode(from: &probe)
        if case .frame = result {
            buffer = probe
            self = probeCodec
            return result
        }
        if probe.readableBytes == 0 {
            buffer = probe
            self = probeCodec
            return .needMoreData
        }
        if self.resynchronization.skips {
            // No more bytes will come, so the pending start byte can be tried as garbage.
            while probe.readableBytes > 0 {
                probeCodec.discard(1, from: &probe)
                if case .frame(let frame) = try probeCodec.decode(from: &probe) {
                    buffer = probe
                    self = probeCodec
                    return .frame(frame)
                }
            }
        }
        throw FramingError.truncated(buffer)
    }

    private mutating func discard(_ count: Int, from buffer: inout ByteBuffer) {
        buffer.moveReaderIndex(forwardBy: count)
        self.discarded += count
    }

    private func badStartByte(_ buffer: ByteBuffer) -> FramingError {
        let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self)!
        return FramingError(
            code: .badStartByte,
            message: "first byte \(first.hexLiteral), expected start byte \(self.startByte.hexLiteral)",
            bytes: buffer.getSlice(at: buffer.readerIndex, length: min(16, buffer.readableBytes))
        )
    }

    private static func checkMaxPayloadLength(_ value: Int) {
        precondition((0...65_535).contains(value), "STXFrameCodec.maxPayloadLength \(value) is outside 0...65_535")
    }
}
