import Logging
import TetherConcurrency

/// A log handler that keeps every record (level, message and metadata as text) for a test to read.
struct CapturingLogHandler: LogHandler {
    let records: LockedBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let metadata = self.metadata.merging(event.metadata ?? [:]) { $1 }
        self.records.withLock { $0.append("\(event.level) \(event.message) \(metadata)") }
    }
}
