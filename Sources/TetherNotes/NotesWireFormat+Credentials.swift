import NIOCore

/// The body of an `authenticate` request: `method (1: 1 password, 2 token) | user length (1) | user (UTF-8) |
/// secret (UTF-8, the rest of the payload)`.
extension NotesWireFormat {
    /// The longest user name, in UTF-8 bytes.
    public static let maxUserNameLength = 64
    /// The longest password or token, in UTF-8 bytes.
    public static let maxSecretLength = 1_024

    static func checkCredentials(_ credentials: NotesCredentials) throws(NotesError) {
        let user = credentials.user.utf8.count
        guard (1...maxUserNameLength).contains(user) else {
            throw malformed("a user name of \(user) bytes; 1 to \(maxUserNameLength)")
        }
        let secret: Int
        switch credentials.secret {
        case .password(let password): secret = password.utf8.count
        case .token(let token): secret = token.utf8.count
        }
        guard (1...maxSecretLength).contains(secret) else {
            throw malformed("a secret of \(secret) bytes; 1 to \(maxSecretLength)")
        }
    }
}

extension ByteBuffer {
    mutating func writeCredentials(_ credentials: NotesCredentials) throws(NotesError) {
        try NotesWireFormat.checkCredentials(credentials)
        switch credentials.secret {
        case .password(let password):
            writeInteger(1, as: UInt8.self)
            writeInteger(UInt8(credentials.user.utf8.count))
            writeString(credentials.user)
            writeString(password)
        case .token(let token):
            writeInteger(2, as: UInt8.self)
            writeInteger(UInt8(credentials.user.utf8.count))
            writeString(credentials.user)
            writeString(token)
        }
    }

    mutating func readCredentials() throws(NotesError) -> NotesCredentials {
        guard let method = readInteger(as: UInt8.self), let length = readInteger(as: UInt8.self),
            let userBytes = readBytes(length: Int(length))
        else { throw NotesWireFormat.malformed("credentials cut short") }
        guard let user = String(validating: userBytes, as: UTF8.self),
            let secret = readBytes(length: readableBytes).flatMap({ String(validating: $0, as: UTF8.self) })
        else { throw NotesWireFormat.malformed("credentials that are not UTF-8") }
        let credentials: NotesCredentials
        switch method {
        case 1: credentials = .password(user: user, secret)
        case 2: credentials = .token(user: user, secret)
        default: throw NotesWireFormat.malformed("an unknown authentication method \(method)")
        }
        try NotesWireFormat.checkCredentials(credentials)
        return credentials
    }
}
