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
    /// A record of more than 4,096 bytes of JSON is read from the table when its notification arrives (an update of
    /// a record deleted since is then skipped: its deletion follows). A row whose id is more than 1,024 bytes of JSON
    /// is not reported (a notification must stay under PostgreSQL's 8,000 bytes).
    ///
    /// - Returns: The changes; the stream fails with `StoreError.Code.io` when the connection to the database is
    ///   lost (the changes made until you watch again are not reported: read the table again) and with
    ///   `StoreError.Code.corruptData` for a notification on the table's channel that its trigger did not send.
    /// - Throws: `StoreError.Code.io` when the database cannot be reached.
    public func changes() async throws -> AsyncThrowingStream<RecordChange<Record>, any Error> {
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
        let channel = PostgresChangeNotification.channel(for: table)
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            let start = LockedBox<CheckedContinuation<Void, any Error>?>(started)
            let task = Task {
                do {
                    try await connection.listen(on: channel) { notifications in
                        start.withLock { $0.take() }?.resume()
                        for try await notification in notifications {
                            let change: RecordChange<Record>? = try await PostgresChangeNotification.change(
                                from: notification.payload,
                                table: table,
                                fetch: { try await self.fetchOne(id: $0) }
                            )
                            if let change { continuation.yield(change) }
                        }
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
