import Foundation
import TetherNotes

/// The credentials of `tether notes … --remote --user NAME`.
enum NotesLogin {
    /// The server refused the credentials: exit 77 with `error: authentication failed`.
    struct Refused: Error {}

    /// `user`'s credentials: from `file` (`password: …` or `token: …` on its first line; mode 0600 or stricter), or
    /// else `TETHER_NOTES_TOKEN`, or else `TETHER_NOTES_PASSWORD`.
    static func credentials(
        user: String,
        file: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> NotesCredentials {
        if let file { return try read(file, user: user) }
        if let token = environment["TETHER_NOTES_TOKEN"], !token.isEmpty { return .token(user: user, token) }
        if let password = environment["TETHER_NOTES_PASSWORD"], !password.isEmpty {
            return .password(user: user, password)
        }
        throw NotesFailure(
            message:
                "no secret for \(user): set TETHER_NOTES_PASSWORD or TETHER_NOTES_TOKEN, or pass --credentials FILE"
        )
    }

    private static func read(_ path: String, user: String) throws -> NotesCredentials {
        let permissions: Int
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        } catch {
            throw NotesFailure(message: "\(path): cannot be read")
        }
        guard permissions & 0o077 == 0 else {
            throw NotesFailure(message: "\(path) is open to group or others; make it private: chmod 600 \(path)")
        }
        guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }),
            let line = text.split(whereSeparator: \.isNewline).first
        else { throw NotesFailure(message: "\(path) is empty") }
        if line.hasPrefix("token:") {
            return .token(user: user, line.dropFirst("token:".count).trimmingCharacters(in: .whitespaces))
        }
        if line.hasPrefix("password:") {
            return .password(user: user, String(line.dropFirst("password:".count).drop { $0 == " " }))
        }
        throw NotesFailure(message: "\(path): the first line must be 'password: SECRET' or 'token: SECRET'")
    }
}
