public import Foundation

/// An error thrown by every TetherStore API: a ``Code`` saying what kind of failure it was, a human message, the file
/// involved when there is one, and the underlying error (errno, SQLite, decoding) when there is one.
///
/// Match the code with `catch StoreError.Code.notFound { … }` or compare `error.code`.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The kind of a ``StoreError``.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric value of the code.
        public let rawValue: Int

        /// Creates a code from its numeric value.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Update or modify of an id that is not in the store.
        public static let notFound = Code(rawValue: 1)
        /// Insert of an id that is already in the store.
        public static let duplicateID = Code(rawValue: 2)
        /// A file cannot be decoded; the file is left untouched.
        public static let corruptData = Code(rawValue: 3)
        /// A read, write, fsync or rename failed; the store's state is unchanged.
        public static let io = Code(rawValue: 4)
        /// An argument is invalid (bad name, unsupported format, value that cannot be encoded).
        public static let invalidArgument = Code(rawValue: 5)
        /// Another instance or process holds the file.
        public static let locked = Code(rawValue: 6)
        /// The object changed in the store since this context read it.
        public static let conflict = Code(rawValue: 7)
        /// The stored model cannot be migrated to the requested model.
        public static let incompatibleModel = Code(rawValue: 8)
        /// Unknown entity or attribute, wrong value type, or missing required value.
        public static let validation = Code(rawValue: 9)

        /// The name of the code, e.g. `notFound`.
        public var description: String {
            switch rawValue {
            case 1: "notFound"
            case 2: "duplicateID"
            case 3: "corruptData"
            case 4: "io"
            case 5: "invalidArgument"
            case 6: "locked"
            case 7: "conflict"
            case 8: "incompatibleModel"
            case 9: "validation"
            default: "code(\(rawValue))"
            }
        }

        /// Matches a thrown error against a code, so that `catch StoreError.Code.locked` works.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? StoreError)?.code == code
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What failed, with what input.
    public var message: String
    /// The file involved, if any.
    public var url: URL?
    /// The error that caused this one (errno, SQLite, decoding), if any.
    public var underlying: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What failed, with what input.
    ///   - url: The file involved, if any.
    ///   - underlying: The error that caused this one, if any.
    public init(code: Code, message: String, url: URL? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.url = url
        self.underlying = underlying
    }

    /// `StoreError(code): message (path) [underlying]`.
    public var description: String {
        var text = "StoreError(\(code)): \(message)"
        if let url {
            text += " (\(url.path))"
        }
        if let underlying {
            text += " [\(underlying)]"
        }
        return text
    }
}

extension StoreError: LocalizedError {
    /// The message and the file, for `localizedDescription` (what an app shows); ``description`` has the code too.
    public var errorDescription: String? {
        if let url { return "\(message) (\(url.path))" }
        return message
    }
}
