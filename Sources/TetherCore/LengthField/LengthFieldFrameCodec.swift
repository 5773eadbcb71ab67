public import NIOCore

/// A codec for frames preceded by a length field: `length | payload`.
///
/// The payload length is the field's value plus ``lengthAdjustment`` (for protocols whose field counts a header, or
/// counts itself). A length that is negative after adjustment or does not fit `Int` throws
/// ``FramingError/Code-swift.struct/invalidLength``; one above ``maxFrameLength`` throws
/// ``FramingError/Code-swift.struct/frameTooLarge``. Both are thrown as soon as the field is complete, before any
/// payload is awaited, and the codec never allocates by a length it has read. Decoded payloads are slices of the
/// received bytes.
///
/// ```swift
/// let codec = LengthFieldFrameCodec(fieldLength: .two)          // 2-byte big-endian field
/// let wire = try codec.encode(ByteBuffer(string: "hi"))       // 00 02 68 69
/// ```
public struct LengthFieldFrameCodec: FrameCodec {
    /// The codec decodes and encodes payloads, without the length field.
    public typealias Frame = ByteBuffer

    /// The width of the length field in bytes.
    public enum FieldLength: Int, Sendable, Hashable, CaseIterable {
        /// A 1-byte field (payloads up to 255 bytes before adjustment).
        case one = 1
        /// A 2-byte field (up to 65 535).
        case two = 2
        /// A 4-byte field (up to 4 294 967 295).
        case four = 4
        /// An 8-byte field.
        case eight = 8

        /// The largest value the field can hold.
        var maxValue: UInt64 {
            switch self {
            case .one: UInt64(UInt8.max)
            case .two: UInt64(UInt16.max)
            case .four: UInt64(UInt32.max)
            case .eight: UInt64.max
            }
        }
    }

    /// The width of the length field. Default ``FieldLength/four``.
    public var fieldLength: FieldLength
    /// The byte order of the length field. Default `.big` (network order).
    public var endianness: Endianness
    /// Added to the field's value to give the payload length. Default 0.
    public var lengthAdjustment: Int
    /// The largest payload, in bytes, the codec decodes or encodes. Default 8 388 608 (8 MiB).
    ///
    /// - Precondition: not negative.
    public var maxFrameLength: Int {
        didSet {
            Self.checkMaxFrameLength(self.maxFrameLength)
        }
    }

    /// Creates a length-field codec.
    ///
    /// - Parameters:
    ///   - fieldLength: The width of the length field.
    ///   - endianness: The byte order of the length field.
    ///   - lengthAdjustment: Added to the field's value to give the payload length.
    ///   - maxFrameLength: The largest payload in bytes; must not be negative.
    public init(
        fieldLength: FieldLength = .four,
        endianness: Endianness = .big,
        lengthAdjustment: Int = 0,
        maxFrameLength: Int = 8_388_608
    ) {
        Self.checkMaxFrameLength(maxFrameLength)
        self.fieldLength = fieldLength
        self.endianness = endianness
        self.lengthAdjustment = lengthAdjustment
        self.maxFrameLength = maxFrameLength
    }

    /// Appends the length field (payload length − ``lengthAdjustment``) and the payload.
    ///
    /// - Parameters:
    ///   - frame: The payload (its readable bytes).
    ///   - buffer: The buffer to append to; unchanged if this throws.
    /// - Throws: ``FramingError/Code-swift.struct/frameTooLarge`` when the payload exceeds ``maxFrameLength`` or
    ///   the field value does not fit the field; ``FramingError/Code-swift.struct/invalidLength`` when the field
    ///   value would be negative. Nothing is appended then.
    public func encode(_ frame: ByteBuffer, into buffer: inout ByteBuffer) throws {
        let count = frame.readableBytes
        guard count <= self.maxFrameLength else {
            throw FramingError(
                code: .frameTooLarge,
                message: "payload of \(count) bytes exceeds maxFrameLength \(self.maxFrameLength)"
            )
        }
        let (value, overflow) = count.subtractingReportingOverflow(self.lengthAdjustment)
        guard !overflow, value <= self.fieldLength.maxValue else {
            throw FramingError(
                code: .frameTooLarge,
                message: "payload of \(count) bytes with lengthAdjustment \(self.lengthAdjustment) "
                    + "does not fit a \(self.fieldLength.rawValue)-byte length field"
            )
        }
        guard value >= 0 else {
            throw FramingError(
                code: .invalidLength,
                message: "payload of \(count) bytes with lengthAdjustment \(self.lengthAdjustment) "
                    + "gives a negative length field \(value)"
            )
        }
        buffer.reserveCapacity(minimumWritableBytes: self.fieldLength.rawValue + count)
        switch self.fieldLength {
        case .one: buffer.writeInteger(UInt8(value))
        case .two: buffer.writeInteger(UInt16(value), endianness: self.endianness)
        case .four: buffer.writeInteger(UInt32(value), endianness: self.endianness)
        case .eight: buffer.writeInteger(UInt64(value), endianness: self.endianness)
        }
        buffer.writeImmutableBuffer(frame)
    }

    /// Decodes one payload from the start of the readable bytes.
    ///
    /// - Parameter buffer: The bytes received so far.
    /// - Returns: The payload (field and payload consumed), or ``FrameDecodingResult/needMoreData`` with the reader
    ///   index unchanged.
    /// - Throws: ``FramingError/Code-swift.struct/invalidLength`` or ``FramingError/Code-swift.struct/frameTooLarge``
    ///   as soon as the field is complete, with the field's bytes attached; the reader index is unchanged.
    public mutating func decode(from buffer: inout ByteBuffer) throws -> FrameDecodingResult<ByteBuffer> {
        let width = self.fieldLength.rawValue
        let readable = buffer.readableBytes
        guard readable >= width else {
            return .needMoreData
        }
        let start = buffer.readerIndex
        let value: UInt64
        switch self.fieldLength {
        case .one: value = UInt64(buffer.getInteger(at: start, as: UInt8.self)!)
        case .two: value = UInt64(buffer.getInteger(at: start, endianness: self.endianness, as: UInt16.self)!)
        case .four: value = UInt64(buffer.getInteger(at: start, endianness: self.endianness, as: UInt32.self)!)
        case .eight: value = buffer.getInteger(at: start, endianness: self.endianness, as: UInt64.self)!
        }
        guard value <= UInt64(Int.max) else {
            throw self.lengthError(.invalidLength, "length field \(value) does not fit Int", buffer)
        }
        let (length, overflow) = Int(value).addingReportingOverflow(self.lengthAdjustment)
        guard !overflow, length >= 0 else {
            throw self.lengthError(
                .invalidLength,
                "length field \(value) with lengthAdjustment \(self.lengthAdjustment) is "
                    + (overflow ? "not representable" : "negative"),
                buffer
            )
        }
        guard length <= self.maxFrameLength else {
            throw self.lengthError(
                .frameTooLarge,
                "length field announces \(length) payload bytes, maxFrameLength is \(self.maxFrameLength)",
                buffer
            )
        }
        guard readable - width >= length else {
            return .needMoreData
        }
        buffer.moveReaderIndex(forwardBy: width)
        return .frame(buffer.readSlice(length: length)!)
    }

    private func lengthError(_ code: FramingError.Code, _ message: String, _ buffer: ByteBuffer) -> FramingError {
        FramingError(
            code: code,
            message: message,
            bytes: buffer.getSlice(at: buffer.readerIndex, length: self.fieldLength.rawValue)
        )
    }

    private static func checkMaxFrameLength(_ value: Int) {
        precondition(value >= 0, "LengthFieldFrameCodec.maxFrameLength \(value) is negative")
    }
}
