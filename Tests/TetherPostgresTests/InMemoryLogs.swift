import Logging
import TetherConcurrency

/// A logger whose messages are kept in memory, for tests that assert what was logged.
struct InMemoryLogs: Sendable {
    private let records = LockedBox<[String]>([])

    /// Every message logged so far, in order.
    var messages: [String] { records.withLock { $0 } }

    /// A logger that keeps every message at any level.
    var logger: Logger {
        let records = records
        return Logger(label: "test") { _ in Handler(records: records) }
    }

    private struct Handler: LogHandler {
        let records: LockedBox<[String]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            records.withLock { $0.append("\(event.message)") }
        }
    }
}
