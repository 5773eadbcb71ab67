/// The limits a ``NotesServer`` holds each client to. Each one reached is answered with a typed error reply and a
/// close (see <doc:NotesProtocol>).
public struct NotesServerLimits: Sendable, Hashable {
    /// Connections open at once from one client address (`.limitExceeded`); not applied by an anonymous server,
    /// whose clients all come from loopback.
    public var connectionsPerAddress: Int
    /// Connections authenticated at once as one user (`.limitExceeded`).
    public var connectionsPerUser: Int
    /// Connections open at once in all (`.limitExceeded`).
    public var connections: Int
    /// The longest a connection may take to authenticate, from its accept (`.timedOut`).
    public var authenticationTimeout: Duration
    /// The longest wait for the next frame (the whole of it) from a connection that is not subscribed (`.timedOut`).
    /// A subscribed connection may stay silent.
    public var idleTimeout: Duration
    /// How often a logged-in connection's credentials are checked again: a revoked token, an expired one, a removed
    /// user or a changed password ends the connections that logged in with it (`.notAuthenticated`) within this time,
    /// also when another process (`tether notes user revoke-tokens`) changed the accounts. Each check is one or two
    /// reads of the accounts, no password derivation.
    public var credentialsCheckInterval: Duration

    /// Limits; the defaults suit a server with a few hundred users.
    public init(
        connectionsPerAddress: Int = 64,
        connectionsPerUser: Int = 32,
        connections: Int = 4_096,
        authenticationTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(300),
        credentialsCheckInterval: Duration = .seconds(10)
    ) {
        self.connectionsPerAddress = connectionsPerAddress
        self.connectionsPerUser = connectionsPerUser
        self.connections = connections
        self.authenticationTimeout = authenticationTimeout
        self.idleTimeout = idleTimeout
        self.credentialsCheckInterval = credentialsCheckInterval
    }
}
