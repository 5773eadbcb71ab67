public import Foundation

/// A user of a notes server with accounts (``NotesAccounts``): a name, a password verifier, and the table that holds
/// the user's notes.
///
/// The record's id is the name, so that a login looks the user up by key. The notes table is named after
/// ``notesKey``, a random id given when the user is made: a user removed and made again under the same name does not
/// find the old notes, and no name can reach another user's table.
public struct NotesUser: Codable, Identifiable, Sendable, Hashable {
    /// The user's name: 1 to 64 characters among `A–Z a–z 0–9 . _ -`, not starting with `.` or `-`.
    public var id: String
    /// The random id the user's notes table is named after.
    public var notesKey: UUID
    /// The salted, slow verifier of the user's password; nil for a user who logs in with tokens only.
    public var password: PasswordVerifier?
    /// When the user was made.
    public var created: Date

    /// The user's name (``id``).
    public var name: String { id }

    /// The table (or record store) of the user's notes: `notes_` and ``notesKey`` in 32 lowercase hex digits.
    public var notesTable: String {
        "notes_" + notesKey.uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// A user record.
    public init(name: String, notesKey: UUID = UUID(), password: PasswordVerifier?, created: Date = Date()) {
        self.id = name
        self.notesKey = notesKey
        self.password = password
        self.created = created
    }

    /// Checks a user name: 1 to 64 characters among `A–Z a–z 0–9 . _ -`, not starting with `.` or `-`.
    /// - Throws: ``NotesError`` `.invalidArgument`.
    public static func validate(name: String) throws(NotesError) {
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "._-".unicodeScalars.contains($0)
        }
        guard (1...NotesWireFormat.maxUserNameLength).contains(name.utf8.count), allowed,
            !name.hasPrefix("."), !name.hasPrefix("-")
        else {
            throw NotesError(
                code: .invalidArgument,
                message: "a user name has 1 to 64 characters among A-Z a-z 0-9 . _ - and starts with none of . -"
            )
        }
    }
}
