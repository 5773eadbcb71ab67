public import Foundation

/// An access token of a user, as stored: the SHA-256 of the token (never the token), whose it is, and until when.
///
/// The token itself (32 random bytes, base64url) is shown once, by ``NotesAccounts/issueToken(for:expiresAt:)``.
public struct NotesAccessToken: Codable, Identifiable, Sendable, Hashable {
    /// The SHA-256 of the token, in lowercase hex: a login looks the token up by key.
    public var id: String
    /// The user's name.
    public var user: String
    /// The user's ``NotesUser/notesKey`` when the token was issued: a token outlives no removal of its user.
    public var notesKey: UUID
    /// When the token was issued.
    public var created: Date
    /// After this the token is refused; nil for never.
    public var expires: Date?

    /// A stored token.
    public init(id: String, user: String, notesKey: UUID, created: Date = Date(), expires: Date? = nil) {
        self.id = id
        self.user = user
        self.notesKey = notesKey
        self.created = created
        self.expires = expires
    }
}
