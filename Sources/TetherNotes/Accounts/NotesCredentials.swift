/// What a client proves itself with on a notes server: a user's name and a password or an access token.
///
/// The secret never appears in a description, a debug description or a dump: logging a message that carries
/// credentials shows `<redacted>`.
///
/// ```swift
/// let notes = try await RemoteNoteStore.connect(
///     host: "notes.internal", port: 7_070, tls: tls, credentials: .password(user: "alice", "correct horse")
/// )
/// ```
public struct NotesCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// How the user proves who they are.
    public enum Secret: Sendable, Hashable {
        /// The user's password.
        case password(String)
        /// An access token issued by ``NotesAccounts/issueToken(for:expiresAt:)``.
        case token(String)
    }

    /// The user's name.
    public var user: String
    /// The password or the token.
    public var secret: Secret

    /// Credentials of `user` with `secret`.
    public init(user: String, secret: Secret) {
        self.user = user
        self.secret = secret
    }

    /// A user's name and password.
    public static func password(user: String, _ password: String) -> NotesCredentials {
        NotesCredentials(user: user, secret: .password(password))
    }

    /// A user's name and access token.
    public static func token(user: String, _ token: String) -> NotesCredentials {
        NotesCredentials(user: user, secret: .token(token))
    }

    /// The user and the kind of secret; never the secret.
    public var description: String {
        switch secret {
        case .password: "\(user) (password <redacted>)"
        case .token: "\(user) (token <redacted>)"
        }
    }

    /// As ``description``.
    public var debugDescription: String { description }

    /// As ``description``: a dump shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "secret": "<redacted>"]) }
}
