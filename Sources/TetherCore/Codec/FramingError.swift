public import NIOCore

/// An error a frame codec throws for bytes that can never become a valid frame, or for a frame it cannot encode.
///
/// Match it by code:
///
/// ```swift
/// do {
///     _ = try codec.decode(from: &buffer)
/// } catch FramingError.Code.checksumMismatch {
///     // the bad frame is still in `buffer`
/// } catch let error as FramingError {
///     print(error.code, error.message, error.bytes?.readableBytes ?? 0)
/// }
/// ```
public struct FramingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a matchable code.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's number (stable across releases).
        public let rawValue: Int

        /// Creates a code from its number.
        ///
        /// - Parameter rawValue: The code's number; unknown numbers are kept as they are.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// The first byte is not the start byte (raw value 1).
        public static let badStartByte = Code(rawValue: 1)
        /// The frame's checksum byte does not match the checksum of its bytes (raw value 2).
        public static let checksumMismatch = Code(rawValue: 2)
        /// A frame's announced or actual length exceeds the codec's maximum (raw value 3).
        public static let frameTooLarge = Code(rawValue: 3)
        /// A length field is negative after adjustment or does not fit `Int` (raw value 4).
        public static let invalidLength = Code(rawValue: 4)
        /// The stream ended inside a frame (raw value 5).
        public static let truncatedFrame = Code(rawValue: 5)
        /// A frame to encode contains the delimiter (raw value 6).
        public static let delimiterInPayload = Code(rawValue: 6)

        /// The code's name, such as `"badStartByte"`, or `"code(N)"` for a number without a name.
        public var description: String {
            switch self.rawValue {
            case 1: "badStartByte"
            case 2: "checksumMismatch"
            case 3: "frameTooLarge"
            case 4: "invalidLength"
            case 5: "truncatedFrame"
            case 6: "delimiterInPayload"
            default: "code(\(self.rawValue))"
            }
        }

        /// Whether `error` is a ``FramingError`` with this code; lets `catch FramingError.Code.badStartByte` match.
        ///
        /// - Parameters:
        ///   - code: The code to match.
        ///   - error: Any error.
        /// - Returns: `true` when `error` is a ``FramingError`` whose ``FramingError/code`` is `code`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? FramingError)?.code == code
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable account, such as `"checksum 0x1F, expected 0xDA"`.
    public var message: String
    /// A copy of the offending or left-over bytes, when there are any.
    public var bytes: ByteBuffer?

    /// Creates a framing error.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: A human-readable account.
    ///   - bytes: A copy of the offending bytes.
    public init(code: Code, message: String, bytes: ByteBuffer? = nil) {
        self.code = code
        self.message = message
        self.bytes = bytes
    }

    /// `FramingError.<code>: <message>`, followed by the number of attached bytes.
    public var description: String {
        var text = "FramingError.\(self.code): \(self.message)"
        if let bytes = self.bytes {
            text += " [\(bytes.readableBytes) bytes attached]"
        }
        return text
    }
}

extension UInt8 {
    /// `0x1F`-style text for messages (TetherCore has no Foundation `String(format:)`).
    var hexLiteral: String {
        let digits = String(self, radix: 16, uppercase: true)
        return self < 0x10 ? "0x0" + digits : "0x" + digits
    }
}
