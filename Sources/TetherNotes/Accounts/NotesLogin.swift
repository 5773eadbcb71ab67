import struct Foundation.Data
import struct Foundation.Date

/// What a successful login proved: the user, and the password verifier or token it was checked against. A server
/// checks it again from time to time (``NotesAccounts/isStillValid(_:now:)``), so that a revoked token, a removed
/// user or a changed password ends the connections that logged in with it.
struct NotesLogin: Sendable, Hashable {
    /// What the login was checked against.
    enum Proof: Sendable, Hashable {
        /// The user's password verifier's derived key, as it was at login.
        case password(Data)
        /// The SHA-256 of the token (its record's id) and its expiry.
        case token(digest: String, expires: Date?)
    }

    /// The user logged in.
    var user: NotesUser
    /// What proved it.
    var proof: Proof
}
