import Foundation
import Logging
import PostgresNIO
import TetherConcurrency
import TetherStore

extension PostgresStore {
    /// The most rows the feed reads in one query.
    static var changeBatchLimit: Int { 500 }

    /// Reports the changes `notifications` name, reading their rows in batches: one task takes the notifications
    /// as they arrive, another reads the rows named by all those waiting, in one query, and reports them in the
    /// notifications' order.
    ///
    /// Returns when the notifications end and every one was reported; throws the first error of either (the other
    /// task is then cancelled). A payload that cannot be read is skipped with a warning (anyone may notify).
    func relayInBatches(
        _ notifications: PostgresNotificationSequence,
        logger: Logger,
        to continuation: AsyncThrowingStream<RecordChange<Record>, any Error>.Continuation
    ) async throws {
        let inbox = LockedBox<[String]>([])
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { wake.finish() }
                for try await notification in notifications {
                    inbox.withLock { $0.append(notification.payload) }
                    wake.yield()
                }
            }
            group.addTask {
                for await _ in wakes {
                    while true {
                        let batch = inbox.withLock { waiting -> [String] in
                            let batch = Array(waiting.prefix(Self.changeBatchLimit))
                            waiting.removeFirst(batch.count)
                            return batch
                        }
                        if batch.isEmpty { break }
                        for change in try await self.changes(reportedBy: batch, logger: logger) {
                            continuation.yield(change)
                        }
                    }
                }
            }
            while try await group.next() != nil {}
        }
    }

    /// The changes `payloads` report, in their order, after one read of the rows they name.
    private func changes(reportedBy payloads: [String], logger: Logger) async throws -> [RecordChange<Record>] {
        var hints: [(key: String, hint: PostgresChangeNotification.Hint<Record.ID>)] = []
        hints.reserveCapacity(payloads.count)
        for payload in payloads {
            do {
                if let hint: (key: String, hint: PostgresChangeNotification.Hint<Record.ID>) =
                    try PostgresChangeNotification.keyedHint(from: payload, schema: schemaName, table: tableName)
                {
                    hints.append(hint)
                }
            } catch let error as StoreError where error.code == .corruptData {
                // Anyone may notify the channel: one bad payload costs that message, not the feed.
                logger.warning("skipped a change notification of \(tableName): \(error.message)")
            }
        }
        guard !hints.isEmpty else { return [] }
        let rows = try await fetchWithVersions(keys: Array(Set(hints.map(\.key))))
        return hints.compactMap { PostgresChangeNotification.change(for: $0.hint, current: rows[$0.key]) }
    }

    /// The records and versions of the rows whose `id` column is one of `keys`, by key (a key without a row is
    /// absent).
    func fetchWithVersions(keys: [String]) async throws -> [String: (record: Record, version: Int64)] {
        let query: PostgresQuery = "SELECT id, record, version FROM \(unescaped: table) WHERE id = ANY(\(keys))"
        let rows = try await pool.withConnection("read of \(tableName)") { connection in
            var rows: [(String, ByteBuffer, Int64)] = []
            for try await row in try await connection.query(query, logger: PostgresPool.logger)
                .decode((String, ByteBuffer, Int64).self)
            {
                rows.append(row)
            }
            return rows
        }
        var found: [String: (record: Record, version: Int64)] = [:]
        let decoder = JSONDecoder()
        for (key, blob, version) in rows {
            found[key] = (
                try RecordRowCoding<Record>.decode(Data(blob.readableBytesView), with: decoder, table: tableName),
                version
            )
        }
        return found
    }
}
