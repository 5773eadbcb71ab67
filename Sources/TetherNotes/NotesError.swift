/// An error of the notes service: what a server answers to a request it cannot carry out, and what
/// ``RemoteNoteStore`` throws.
///
/// The code travels in the error reply (see <doc:NotesProtocol>), so a device team's client gets the same codes.
public struct NotesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a number that travels on the wire.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The number on the wire.
        public let rawValue: UInt16

        /// A code from its number on the wire.
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// The payload of a frame is not a message of the protocol (too short, a bad field, text that is not UTF-8).
        public static let malformedMessage = Code(rawValue: 1)
        /// The message kind is not one the receiver knows.
        public static let unknownMessage = Code(rawValue: 2)
        /// No note has the id of an edit or a remove.
        public static let notFound = Code(rawValue: 3)
        /// A note's text is longer than ``NotesWireFormat/maxTextLength`` bytes.
        public static let tooLarge = Code(rawValue: 4)
        /// A frame's checksum did not match; the connection goes on.
        public static let badChecksum = Code(rawValue: 5)
        /// The stream is out of step (a wrong start byte, a length over the limit): the server answers this, then
        /// closes the connection.
        public static let outOfStep = Code(rawValue: 6)
        /// The store failed: nothing changed after a list or a read, and a change may or may not have been made
        /// after an add, an edit or a remove (list to know).
        public static let storeFailure = Code(rawValue: 7)
        /// The connection to the server ended or could not be made (client side only).
        public static let connectionFailed = Code(rawValue: 8)
        /// The credentials were refused: a wrong password, an unknown user, a revoked or expired token, or too many
        /// failed attempts for the user or the address. The server says no more than that, then closes.
        public static let authenticationFailed = Code(rawValue: 9)
        /// A request other than `authenticate` came first on a connection that must authenticate; the server closes.
        public static let notAuthenticated = Code(rawValue: 10)
        /// A limit of the server was reached (connections per address or per user); the server closes.
        public static let limitExceeded = Code(rawValue: 11)
        /// The client took too long: to authenticate, to finish a frame, or between requests; the server closes.
        public static let timedOut = Code(rawValue: 12)
        /// An argument of an account operation is not valid (a user name, a user that exists already).
        public static let invalidArgument = Code(rawValue: 13)

        /// The code's name, or its number.
        public var description: String {
            switch rawValue {
            case 1: "malformedMessage"
            case 2: "unknownMessage"
            case 3: "notFound"
            case 4: "tooLarge"
            case 5: "badChecksum"
            case 6: "outOfStep"
            case 7: "storeFailure"
            case 8: "connectionFailed"
            case 9: "authenticationFailed"
            case 10: "notAuthenticated"
            case 11: "limitExceeded"
            case 12: "timedOut"
            case 13: "invalidArgument"
            default: "code \(rawValue)"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// Why, for people.
    public var message: String

    /// An error with a code and a message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// `"<code>: <message>"`.
    public var description: String { "\(code): \(message)" }
}
