import Crypto
public import Foundation
import NIOPosix
public import TetherStore

/// The users of a notes server, their credentials, and each one's own notes.
///
/// Users and tokens are records in two stores; each user's notes live in a store of their own, named after the user's
/// ``NotesUser/notesKey`` (``NotesUser/notesTable``), which `notes` opens. A session bound to a user after
/// authentication opens that user's store only: no query of the server names another user's notes.
///
/// ```swift
/// let accounts = try NotesAccounts.sqlite(directory: folder)
/// try await accounts.addUser("alice", password: "correct horse battery staple")
/// let server = NotesServer(accounts: accounts)
/// ```
public final class NotesAccounts: Sendable {
    /// Opens the notes of a user (creating the store if needed).
    public typealias OpenNotes = @Sendable (NotesUser) async throws -> NotesSpace
    /// Deletes the notes of a removed user.
    public typealias DropNotes = @Sendable (NotesUser) async throws -> Void

    private let users: any RecordStore<NotesUser>
    private let tokens: any RecordStore<NotesAccessToken>
    private let openNotes: OpenNotes
    private let dropNotes: DropNotes
    /// The PBKDF2 iterations of new passwords.
    public let passwordIterations: Int
    /// What a login of an unknown user is checked against, so that it costs what a known user's does.
    private let decoy: PasswordVerifier

    /// Accounts in `users` and `tokens`, each user's notes opened by `notes`.
    /// - Parameters:
    ///   - users: the users (by name).
    ///   - tokens: the access tokens (by SHA-256).
    ///   - passwordIterations: PBKDF2 iterations for new passwords (``PasswordVerifier/defaultIterations``).
    ///   - notes: opens a user's notes.
    ///   - dropNotes: deletes a removed user's notes.
    public init(
        users: any RecordStore<NotesUser>,
        tokens: any RecordStore<NotesAccessToken>,
        passwordIterations: Int = PasswordVerifier.defaultIterations,
        notes: @escaping OpenNotes,
        dropNotes: @escaping DropNotes
    ) {
        self.users = users
        self.tokens = tokens
        self.passwordIterations = passwordIterations
        self.openNotes = notes
        self.dropNotes = dropNotes
        self.decoy = PasswordVerifier(password: UUID().uuidString, iterations: passwordIterations)
    }

    /// Makes a user, with a password or none (then the user logs in with tokens only).
    /// - Throws: ``NotesError`` `.invalidArgument` for a name that ``NotesUser/validate(name:)`` refuses, a user of
    ///   that name that exists, or an empty or over-long password; the store's error otherwise.
    @discardableResult
    public func addUser(_ name: String, password: String?) async throws -> NotesUser {
        try NotesUser.validate(name: name)
        if let password {
            guard (1...NotesWireFormat.maxSecretLength).contains(password.utf8.count) else {
                throw NotesError(code: .invalidArgument, message: "a password has 1 to 1024 bytes")
            }
        }
        var verifier: PasswordVerifier?
        if let password { verifier = try await makeVerifier(of: password) }
        let user = NotesUser(name: name, password: verifier)
        do {
            try await users.insert(user)
        } catch let error as StoreError where error.code == .duplicateID {
            throw NotesError(code: .invalidArgument, message: "a user \(name) exists")
        }
        _ = try await openNotes(user)
        return user
    }

    /// Replaces a user's password.
    /// - Throws: ``NotesError`` `.notFound` when there is no such user.
    public func setPassword(_ password: String, of name: String) async throws {
        guard var user = try await users.fetchOne(id: name) else { throw Self.noUser(name) }
        user.password = try await makeVerifier(of: password)
        try await users.update(user)
    }

    /// Every user, in the order they were made.
    public func allUsers() async throws -> [NotesUser] {
        try await users.fetchAll()
    }

    /// The user named `name`, or nil.
    public func user(named name: String) async throws -> NotesUser? {
        try await users.fetchOne(id: name)
    }

    /// Removes a user, their tokens and their notes.
    /// - Returns: false when there was no such user.
    @discardableResult
    public func removeUser(_ name: String) async throws -> Bool {
        guard let user = try await users.fetchOne(id: name) else { return false }
        _ = try await revokeTokens(of: name)
        try await users.delete(id: name)
        try await dropNotes(user)
        return true
    }

    /// Issues an access token for a user: 32 random bytes in base64url, returned once; only its SHA-256 is kept.
    /// - Parameters:
    ///   - name: the user.
    ///   - expiresAt: after this the token is refused; nil for never.
    /// - Throws: ``NotesError`` `.notFound` when there is no such user.
    public func issueToken(for name: String, expiresAt: Date? = nil) async throws -> String {
        guard let user = try await users.fetchOne(id: name) else { throw Self.noUser(name) }
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let token = bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        try await tokens.insert(
            NotesAccessToken(id: Self.digest(token), user: name, notesKey: user.notesKey, expires: expiresAt)
        )
        return token
    }

    /// Revokes every token of a user.
    /// - Returns: the number revoked.
    public func revokeTokens(of name: String) async throws -> Int {
        var revoked = 0
        for token in try await tokens.fetchAll() where token.user == name {
            if try await tokens.delete(id: token.id) { revoked += 1 }
        }
        return revoked
    }

    /// The user whom `credentials` prove, or nil: a wrong password, an unknown user, a user without a password, a
    /// revoked, expired or another user's token all give nil, after about the same work (an unknown user's password
    /// is checked against a decoy verifier of the same cost).
    /// - Throws: the store's error when the users cannot be read.
    public func authenticate(_ credentials: NotesCredentials, now: Date = Date()) async throws -> NotesUser? {
        try await login(credentials, now: now)?.user
    }

    /// What `credentials` prove (see ``authenticate(_:now:)``), kept by a server to check again later.
    func login(_ credentials: NotesCredentials, now: Date) async throws -> NotesLogin? {
        let user = try await users.fetchOne(id: credentials.user)
        switch credentials.secret {
        case .password(let password):
            // PBKDF2 takes a good fraction of a second at the default cost: it runs on NIO's blocking pool, never on
            // the tasks' cooperative threads, which a burst of logins would otherwise hold (every other connection
            // of the process waiting behind them).
            let verifier = user?.password ?? decoy
            let verified = try await NIOThreadPool.singleton.runIfActive { verifier.verifies(password) }
            guard verified, let user, let stored = user.password else { return nil }
            return NotesLogin(user: user, proof: .password(stored.hash))
        case .token(let token):
            let digest = Self.digest(token)
            guard let stored = try await tokens.fetchOne(id: digest), let user,
                constantTimeEquals(Data(stored.user.utf8), Data(user.name.utf8)), stored.notesKey == user.notesKey,
                stored.expires.map({ now < $0 }) ?? true
            else { return nil }
            return NotesLogin(user: user, proof: .token(digest: digest, expires: stored.expires))
        }
    }

    /// Whether what `login` proved still holds: the user exists with the same notes, and the password is unchanged or
    /// the token is neither revoked nor expired. Costs one or two reads, no password derivation.
    /// - Throws: the store's error when the users or tokens cannot be read.
    func isStillValid(_ login: NotesLogin, now: Date) async throws -> Bool {
        guard let user = try await users.fetchOne(id: login.user.name), user.notesKey == login.user.notesKey else {
            return false
        }
        switch login.proof {
        case .password(let hash):
            return user.password?.hash == hash
        case .token(let digest, let expires):
            if let expires, now >= expires { return false }
            guard let stored = try await tokens.fetchOne(id: digest) else { return false }
            return stored.user == user.name && stored.notesKey == user.notesKey
        }
    }

    /// The notes of `user` (their store is created if needed).
    public func notes(of user: NotesUser) async throws -> NotesSpace {
        try await openNotes(user)
    }

    /// Copies every note of `dao` (an existing single-user store) into the notes of user `name`, keeping ids, dates
    /// and order; notes already there (same id) are replaced, so that a second run adds nothing.
    /// - Returns: the number of notes copied.
    /// - Throws: ``NotesError`` `.notFound` when there is no such user.
    public func importNotes(from dao: NoteDAO, to name: String) async throws -> Int {
        guard let user = try await users.fetchOne(id: name) else { throw Self.noUser(name) }
        let store = try await openNotes(user).store
        let notes = try await dao.findAll()
        for note in notes { try await store.upsert(note) }
        return notes.count
    }

    /// The verifier of a new password, derived on NIO's blocking pool (see ``authenticate(_:now:)``).
    private func makeVerifier(of password: String) async throws -> PasswordVerifier {
        let iterations = passwordIterations
        return try await NIOThreadPool.singleton.runIfActive {
            PasswordVerifier(password: password, iterations: iterations)
        }
    }

    /// The SHA-256 of a token, lowercase hex.
    static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    private static func noUser(_ name: String) -> NotesError {
        NotesError(code: .notFound, message: "no user \(name)")
    }
}
