public import NIOCore

/// A codec for frames ended by a delimiter: lines (LF, CRLF, CR), NUL-terminated strings, or any byte sequence.
///
/// A delimiter split across chunks is found. The codec remembers how far it has searched the buffered bytes, so a
/// frame drip-fed one byte at a time costs time linear in its length; if bytes are removed from the buffer other
/// than by ``decode(from:)``, go on with a fresh copy of the codec. Once ``maxLength`` + `delimiter.bytes.count`
/// bytes are buffered with no delimiter starting at an offset ≤ ``maxLength``, ``decode(from:)`` throws
/// ``FramingError/Code-swift.struct/frameTooLarge``; a frame of exactly ``maxLength`` bytes followed by the
/// delimiter succeeds. Decoded frames are slices of the received bytes.
///
/// Δ vs `readDataToData(_:withTimeout:maxLength:tag:)`: there `maxLength` counts the separator and the result
/// always includes it; here ``maxLength`` excludes it and keeping it is ``includesDelimiter``.
///
/// ```swift
/// var codec = DelimiterFrameCodec(delimiter: .crlf)
/// var buffer = ByteBuffer(string: "HELO\r\nQUIT\r\n")
/// while case .frame(let line) = try codec.decode(from: &buffer) {
///     print(String(buffer: line))  // HELO, QUIT
/// }
/// ```
public struct DelimiterFrameCodec: FrameCodec {
    /// The codec decodes and encodes frames as buffers.
    public typealias Frame = ByteBuffer

    /// The byte sequence that ends a frame.
    public struct Delimiter: Sendable, Hashable {
        /// The delimiter's bytes.
        ///
        /// - Precondition: not empty.
        public var bytes: [UInt8] {
            didSet {
                precondition(!self.bytes.isEmpty, "DelimiterFrameCodec.Delimiter must not be empty")
            }
        }

        /// Creates a delimiter.
        ///
        /// - Parameter bytes: The delimiter's bytes; must not be empty.
        public init(_ bytes: [UInt8]) {
            precondition(!bytes.isEmpty, "DelimiterFrameCodec.Delimiter must not be empty")
            self.bytes = bytes
        }

        /// `0D 0A`, as `GCDAsyncSocket.CRLFData`.
        public static let crlf = Delimiter([0x0D, 0x0A])
        /// `0A`.
        public static let lf = Delimiter([0x0A])
        /// `0D`.
        public static let cr = Delimiter([0x0D])
        /// `00`.
        public static let nul = Delimiter([0x00])
    }

    /// The byte sequence that ends a frame. Default ``Delimiter/lf``.
    public var delimiter: Delimiter {
        didSet {
            self.scan = ScanState()
        }
    }
    /// The largest frame in bytes, *excluding* the delimiter. Default 16 384.
    ///
    /// - Precondition: not negative.
    public var maxLength: Int {
        didSet {
            Self.checkMaxLength(self.maxLength)
        }
    }
    /// Whether decoded frames keep their delimiter. Default `false` (frames are stripped).
    public var includesDelimiter: Bool

    /// How far the last unsuccessful search got, so a growing buffer is not searched from the start again.
    private struct ScanState: Sendable {
        /// The reader index the search was made at; a different one means the bytes are not the same.
        var readerIndex = -1
        /// Offsets below this (from the reader index) were ruled out as the start of a delimiter.
        var searched = 0
    }

    private var scan = ScanState()

    /// Creates a delimiter codec.
    ///
    /// - Parameters:
    ///   - delimiter: The byte sequence that ends a frame.
    ///   - maxLength: The largest frame in bytes, excluding the delimiter; must not be negative.
    ///   - includesDelimiter: Whether decoded frames keep their delimiter.
    public init(delimiter: Delimiter = .lf, maxLength: Int = 16_384, includesDelimiter: Bool = false) {
        Self.checkMaxLength(maxLength)
        self.delimiter = delimiter
        self.maxLength = maxLength
        self.includesDelimiter = includesDelimiter
    }

    /// Appends the frame and, unless the frame already ends with it, the delimiter.
    ///
    /// - Parameters:
    ///   - frame: The frame (its readable bytes), with or without the delimiter at its end.
    ///   - buffer: The buffer to append to; unchanged if this throws.
    /// - Throws: ``FramingError/Code-swift.struct/delimiterInPayload`` when the delimiter occurs anywhere except as
    ///   the frame's suffix (including an occurrence that would straddle the appended delimiter);
    ///   ``FramingError/Code-swift.struct/frameTooLarge`` when the frame without its delimiter is longer than
    ///   ``maxLength``. Nothing is appended then.
    public func encode(_ frame: ByteBuffer, into buffer: inout ByteBuffer) throws {
        let delimiter = self.delimiter.bytes
        let endsWithDelimiter = frame.readableBytesView.reversed().starts(with: delimiter.reversed())
        let bodyLength = frame.readableBytes - (endsWithDelimiter ? delimiter.count : 0)
        guard bodyLength <= self.maxLength else {
            throw FramingError(
                code: .frameTooLarge,
                message: "frame of \(bodyLength) bytes exceeds maxLength \(self.maxLength)"
            )
        }
        // The decoder ends the frame at the first delimiter in body + delimiter; it must be the appended one.
        let firstDelimiter = frame.withUnsafeReadableBytes { body in
            delimiter.withUnsafeBufferPointer { needle in
                Self.firstDelimiter(in: UnsafeRawBufferPointer(rebasing: body[..<bodyLength]), needle: needle)
            }
        }
        if let offset = firstDelimiter {
            throw FramingError(
                code: .delimiterInPayload,
                message: "frame contains the delimiter at offset \(offset)",
                bytes: frame
            )
        }
        buffer.reserveCapacity(minimumWritableBytes: bodyLength + delimiter.count)
        buffer.writeImmutableBuffer(frame)
        if !endsWithDelimiter {
            buffer.writeBytes(delimiter)
        }
    }

    /// Decodes one frame from the start of the readable bytes.
    ///
    /// - Parameter buffer: The bytes received so far.
    /// - Returns: The frame up to the first delimiter (with it if ``includesDelimiter``; frame and delimiter
    ///   consumed), or ``FrameDecodingResult/needMoreData`` with the reader index unchanged.
    /// - Throws: ``FramingError/Code-swift.struct/frameTooLarge`` once ``maxLength`` + delimiter bytes are buffered
    ///   without a delimiter starting at an offset ≤ ``maxLength``; the first `maxLength + delimiter.bytes.count`
    ///   bytes are attached and the reader index is unchanged.
    public mutating func decode(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<ByteBuffer> {
        let delimiterLength = self.delimiter.bytes.count
        let readable = buffer.readableBytes
        var from = 0
        if self.scan.readerIndex == buffer.readerIndex && self.scan.searched <= readable {
            from = self.scan.searched
        }
        // A delimiter can start at offsets up to `maxLength`, and must fit in the readable bytes.
        let lastStart = min(readable - delimiterLength, self.maxLength)
        if lastStart >= from {
            let found = buffer.withUnsafeReadableBytes { bytes in
                self.delimiter.bytes.withUnsafeBufferPointer { needle in
                    ByteSearch.firstIndex(of: needle, in: bytes, from: from, lastStart: lastStart)
                }
            }
            if let offset = found {
                self.scan = ScanState()
                let frameLength = self.includesDelimiter ? offset + delimiterLength : offset
                let frame = buffer.readSlice(length: frameLength)!
                if !self.includesDelimiter {
                    buffer.moveReaderIndex(forwardBy: delimiterLength)
                }
                return .frame(frame)
            }
            from = lastStart + 1
        }
        // `readable >= maxLength + delimiterLength`, written so that it cannot overflow.
        if readable - delimiterLength >= self.maxLength {
            throw FramingError(
                code: .frameTooLarge,
                message: "no delimiter within maxLength \(self.maxLength) (\(readable) bytes buffered)",
                bytes: buffer.getSlice(at: buffer.readerIndex, length: self.maxLength + delimiterLength)
            )
        }
        self.scan = ScanState(readerIndex: buffer.readerIndex, searched: from)
        return .needMoreData
    }

    /// The offset of the first delimiter in `body` followed by the delimiter, if it starts inside `body`.
    private static func firstDelimiter(in body: UnsafeRawBufferPointer, needle: UnsafeBufferPointer<UInt8>) -> Int? {
        let count = needle.count
        var candidate = 0
        while candidate < body.count {
            guard let found = ByteSearch.firstIndex(of: needle[0], in: body, from: candidate, to: body.count) else {
                return nil
            }
            // Compare against body[found...] followed by the delimiter itself.
            var matched = 1
            while matched < count {
                let position = found + matched
                let byte = position < body.count ? body[position] : needle[position - body.count]
                if byte != needle[matched] {
                    break
                }
                matched += 1
            }
            if matched == count {
                return found
            }
            candidate = found + 1
        }
        return nil
    }

    private static func checkMaxLength(_ value: Int) {
        precondition(value >= 0, "DelimiterFrameCodec.maxLength \(value) is negative")
    }
}
