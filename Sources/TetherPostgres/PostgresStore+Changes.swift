public import Logging
import PostgresNIO
import TetherConcurrency
public import TetherStore

extension PostgresStore {
    /// Every change made to the table from now on, by any store, pool or process writing to it (or by hand in SQL),
    /// in the order the writes committed.
    ///
    /// Each table's trigger reports its rows with PostgreSQL's `LISTEN/NOTIFY`: a change is sent when its
    /// transaction commits and never when it rolls back. The feed listens on a connection of its own, outside the
    /// pool; it is listening when this method returns, so every write that commits afterwards is reported. It ends
    /// when the task iterating it is cancelled or the iteration stops.
    ///
    /// A notification names the row, never carries it: any role that can connect may send one. The feed reads the
    /// row after the notification arrives and reports what the table holds then (the rows named by the notifications
    /// that arrived while it read the previous ones are read together, in one query, so that the feed does not fall
    /// behind a database that commits faster than one read per change), so a record is reported with the content of
    /// its latest write (an insert followed at once by an update may be reported as an insert and an
    /// update of the updated record), an insert or update of a record deleted since is skipped (its deletion
    /// follows), and a deletion of a row that exists again is skipped (its insert follows). A notification the
    /// table does not confirm is skipped; one that cannot be read is skipped with a warning on `logger`. Neither
    /// ends the feed. A row whose id is more than 1,024 bytes of JSON is not reported (a notification must stay
    /// under PostgreSQL's 8,000 bytes).
    ///
    /// - Parameter logger: Where a skipped notification that cannot be read is reported, at `.warning`.
    /// - Returns: The changes; the stream fails with `StoreError.Code.io` when the connection to the database is
    ///   lost (the changes made until you watch again are not reported: read the table again).
    /// - Throws: `StoreError.Code.io` when the database cannot be reached.
    public func changes(
        logger: Logger = Logger(label: "tether.postgres.changes")
    ) async throws -> AsyncThrowingStream<RecordChange<Record>, any Error> {
        let configuration = pool.configuration
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: try configuration.connectionConfiguration(),
                id: 1,
                logger: PostgresPool.logger
            )
        } catch {
            throw postgresStoreError(error, "cannot watch \(tableName) (database at \(configuration.endpoint))")
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: RecordChange<Record>.self)
        let table = tableName
        let schema = schemaName
        let channel = PostgresChangeNotification.channel(schema: schema, table: table)
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            let start = LockedBox<CheckedContinuation<Void, any Error>?>(started)
            let task = Task {
                do {
                    try await connection.listen(on: channel) { notifications in
                        start.withLock { $0.take() }?.resume()
                        try await self.relayInBatches(
                            notifications,
                            logger: logger,
                            to: continuation
                        )
                    }
                    if Task.isCancelled {
                        continuation.finish()
                    } else {
                        continuation.finish(
                            throwing: StoreError(code: .io, message: "the database ended the change feed of \(table)")
                        )
                    }
                } catch {
                    let error = postgresStoreError(error, "the change feed of \(table)")
                    if let started = start.withLock({ $0.take() }) {
                        started.resume(throwing: error)
                    } else if Task.isCancelled {
                        continuation.finish()
                    } else {
                        continuation.finish(throwing: error)
                    }
                }
                try? await connection.close()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return stream
    }
}
