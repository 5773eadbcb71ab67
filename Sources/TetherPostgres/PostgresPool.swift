import Logging
import NIOCore
public import PostgresNIO
import TetherConcurrency
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

    static let logger = Logger(label: "tether.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Starts a pool; it connects lazily, on the first query.
    /// - Parameter configuration: Where the database is.
    public init(configuration: PostgresConfiguration) {
        self.configuration = configuration
        let client = PostgresClient(configuration: configuration.clientConfiguration)
        self.client = client
        runner = Task { await client.run() }
    }

    /// A pool whose client runs with `executor` as its task executor preference (the object stores' bridge).
    init(configuration: PostgresConfiguration, executor: any TaskExecutor) {
        self.configuration = configuration
        let client = PostgresClient(configuration: configuration.clientConfiguration)
        self.client = client
        runner = Task(executorPreference: executor) { await client.run() }
    }

    /// Starts a pool on the database at a `postgres://` URL.
    /// - Parameter url: The URL (see ``PostgresConfiguration``).
    /// - Throws: `StoreError.Code.invalidArgument` for a URL that is not a PostgreSQL URL.
    public convenience init(url: String) throws {
        self.init(configuration: try PostgresConfiguration(url: url))
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
    /// A connection not had within ``PostgresConfiguration/connectionTimeout`` (server down, every connection busy)
    /// ends the call with `StoreError.Code.io`; errors are mapped to ``StoreError``s.
    func withConnection<T: Sendable>(
        _ what: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let client = client
        let acquired = LockedBox(false)
        let timeout = configuration.connectionTimeout
        let endpoint = configuration.endpoint
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        acquired.withLock { $0 = true }
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    if acquired.withLock({ $0 }) { return nil }
                    throw StoreError(
                        code: .io,
                        message: "\(what): no connection to the database at \(endpoint) within \(timeout)"
                    )
                }
                while let result = try await group.next() {
                    if let result {
                        group.cancelAll()
                        return result
                    }
                }
                throw CancellationError()
            }
        } catch {
            throw postgresStoreError(error, what)
        }
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
    /// the connection's own error (refused, authentication, no such database) instead of waiting for the pool.
    func withDedicatedConnection<T: Sendable>(
        _ what: String,
        _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try configuration.connectionConfiguration(),
                id: 0,
                logger: Self.logger
            )
            do {
                let result = try await body(connection)
                try? await connection.close()
                return result
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw postgresStoreError(error, "\(what) (database at \(configuration.endpoint))")
        }
    }

    /// `BEGIN`, `body`, `COMMIT`; `ROLLBACK` and the body's own error when it throws.
    static func transaction<T: Sendable>(
        on connection: PostgresConnection,
        _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await connection.query("BEGIN", logger: logger)
        let result: T
        do {
            result = try await body(connection)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        try await connection.query("COMMIT", logger: logger)
        return result
    }
}
