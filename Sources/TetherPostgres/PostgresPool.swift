import Logging
import NIOCore
public import PostgresNIO
import TetherStore

/// The connections to one PostgreSQL database that ``PostgresStore``s share: postgres-nio's `PostgresClient`, run
/// for as long as the pool lives.
///
/// Each pool is one client of the server; several pools (in one process or many) may write to the same tables at
/// once, the database arbitrating. Releasing the last reference, or ``close()``, closes the connections.
public final class PostgresPool: Sendable {
    /// Where the database is.
    public let configuration: PostgresConfiguration
    /// The postgres-nio client the stores run their queries on (for queries of your own).
    public let client: PostgresClient
    private let runner: Task<Void, Never>
    /// The executor the calls' work runs on (the object stores' bridge), or `nil` for the default.
    private let executor: (any TaskExecutor)?
    private let watch = PostgresConnectionWatch()

    static let logger = Logger(label: "tether.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Starts a pool; it connects lazily, on the first query.
    /// - Parameter configuration: Where the database is.
    /// - Throws: `StoreError.Code.invalidArgument` for a ``PostgresConfiguration/connectionTimeout`` or
    ///   ``PostgresConfiguration/queryTimeout`` that is zero or negative, or a
    ///   ``PostgresConfiguration/maximumConnections`` under 1.
    public init(configuration: PostgresConfiguration) throws {
        try configuration.validate()
        self.configuration = configuration
        let client = PostgresClient(configuration: configuration.clientConfiguration)
        self.client = client
        executor = nil
        runner = Task { await client.run() }
    }

    /// A pool whose client and calls run with `executor` as their task executor preference (the object stores'
    /// bridge).
    init(configuration: PostgresConfiguration, executor: any TaskExecutor) throws {
        try configuration.validate()
        self.configuration = configuration
        let client = PostgresClient(configuration: configuration.clientConfiguration)
        self.client = client
        self.executor = executor
        runner = Task(executorPreference: executor) { await client.run() }
    }

    /// Starts a pool on the database at a `postgres://` URL.
    /// - Parameter url: The URL (see ``PostgresConfiguration``).
    /// - Throws: `StoreError.Code.invalidArgument` for a URL that is not a PostgreSQL URL.
    public convenience init(url: String) throws {
        try self.init(configuration: try PostgresConfiguration(url: url))
    }

    deinit {
        runner.cancel()
    }

    /// Closes every connection and waits until they are closed; the pool cannot be used afterwards.
    public func close() async {
        runner.cancel()
        await runner.value
    }

    /// Runs `body` on a connection of the pool.
    ///
    /// A connection not had within ``PostgresConfiguration/connectionTimeout`` (server down, every connection busy),
    /// no answer within ``PostgresConfiguration/queryTimeout`` once it is had (the connection is then closed), or a
    /// connection that closes before `body` ends, ends the call with `StoreError.Code.io`; errors are mapped to
    /// ``StoreError``s.
    func withConnection<T: Sendable>(
        _ what: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let client = client
        let call = PostgresCall<T>(what, configuration: configuration, watch: watch) {
            postgresStoreError($0, what)
        }
        return try await call.run(
            executor: executor,
            lease: { use in try await client.withConnection { try await use($0) } },
            body
        )
    }

    /// Runs `body` in one transaction on a connection of the pool: committed when it returns, rolled back when it
    /// throws (its error is rethrown). It returns once PostgreSQL has committed the transaction.
    ///
    /// Every write of a store runs this way, even a single statement. postgres-nio reports a statement done at its
    /// `CommandComplete`, and PostgreSQL sends that before it commits a statement outside a transaction block (the
    /// commit comes with the `Sync` that follows): a server that stops in between, or a commit that fails (a deferred
    /// constraint), would roll back a write already reported done. A `COMMIT` statement's `CommandComplete` comes
    /// after the commit, and a failed commit is that statement's error.
    func withTransaction<T: Sendable>(
        _ what: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection(what) { connection in
            try await Self.transaction(on: connection, body)
        }
    }

    /// Runs `body` on a connection of its own, outside the pool, closed afterwards: opening a store fails at once with
    /// the connection's own error (refused, authentication, no such database) instead of waiting for the pool. The
    /// deadlines and the close of the connection end it as they end ``withConnection(_:_:)``.
    func withDedicatedConnection<T: Sendable>(
        _ what: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let configuration = configuration
        let call = PostgresCall<T>(
            what,
            configuration: configuration,
            waitsForPool: false,
            watch: PostgresConnectionWatch()
        ) {
            postgresStoreError($0, "\(what) (database at \(configuration.endpoint))")
        }
        return try await call.run(
            executor: executor,
            lease: { use in
                let connection = try await PostgresConnection.connect(
                    configuration: try configuration.connectionConfiguration(),
                    id: 0,
                    logger: Self.logger
                )
                do {
                    let result = try await use(connection)
                    try? await connection.close()
                    return result
                } catch {
                    try? await connection.close()
                    throw error
                }
            },
            body
        )
    }

    /// `BEGIN`, `body`, `COMMIT`; `ROLLBACK` and the body's own error when it throws.
    static func transaction<T: Sendable>(
        on connection: PostgresConnection,
        _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await command("BEGIN", on: connection)
        let result: T
        do {
            result = try await body(connection)
        } catch {
            // A closed connection has nothing to roll back: the server rolls back the transaction of a session that ends.
            if !connection.isClosed {
                _ = try? await connection.query("ROLLBACK", logger: logger)
            }
            throw error
        }
        try await command("COMMIT", on: connection)
        return result
    }

    /// Runs a statement without parameters or rows; on a connection that has closed, fails at once.
    ///
    /// postgres-nio never answers a query written to a connection whose channel has closed (its `PostgresConnection`
    /// writes it with no promise, and the closed channel's pipeline drops it): the check leaves only the moment between
    /// it and the write to the call's deadline and to the watch on the connection's close.
    private static func command(_ sql: String, on connection: PostgresConnection) async throws {
        guard !connection.isClosed else {
            throw StoreError(code: .io, message: "the connection to the database closed before \(sql)")
        }
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }
}
