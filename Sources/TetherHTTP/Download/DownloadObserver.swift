import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams a load's body into a temporary file next to the destination, then renames it into place.
// Sendable: its mutable state (file handle, counters) is touched only from the load's task, one event at a time.
final class DownloadObserver: LoadObserver, @unchecked Sendable {
    private let destination: URL
    private let progress: (@Sendable (DownloadProgress) -> Void)?
    private let completion: @Sendable (LoadOutcome) -> Void
    private var response: HTTPURLResponse?
    private var temporaryURL: URL?
    private var handle: FileHandle?
    private var written: Int64 = 0
    private var expected: Int64?
    private var lastReport = DispatchTime.now()
    private var unreported: Int64 = 0
    private var metrics: URLConnectionMetrics?
    let collectsMetrics: Bool

    init(
        destination: URL,
        progress: (@Sendable (DownloadProgress) -> Void)?,
        collectsMetrics: Bool = false,
        completion: @escaping @Sendable (LoadOutcome) -> Void
    ) {
        self.destination = destination
        self.progress = progress
        self.collectsMetrics = collectsMetrics
        self.completion = completion
    }

    func loadDidCollect(_ metrics: URLConnectionMetrics) {
        self.metrics = metrics
    }

    func loadDidReceive(_ response: HTTPURLResponse) async throws {
        guard (200..<300).contains(response.statusCode) else {
            self.response = response
            throw URLError.tether(
                .badServerResponse,
                url: response.url,
                message: "the server answered HTTP \(response.statusCode)"
            )
        }
        self.response = response
        self.expected = response.expectedContentLength >= 0 ? response.expectedContentLength : nil
        try self.openTemporary(for: response.url)
    }

    private func openTemporary(for url: URL?) throws {
        self.removeTemporary()
        let directory = self.destination.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(self.destination.lastPathComponent).tether-\(UUID().uuidString).download"
        )
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary.path)
        else {
            throw URLError.tether(.cannotCreateFile, url: url, message: "cannot create \(temporary.path)")
        }
        self.temporaryURL = temporary
        self.handle = handle
        self.written = 0
    }

    func loadDidReceive(_ data: ByteBuffer) async throws {
        guard let handle = self.handle else { return }
        do {
            try data.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
        } catch {
            throw URLError.tether(.cannotWriteToFile, url: self.response?.url, underlying: error)
        }
        self.written += Int64(data.readableBytes)
        self.unreported += Int64(data.readableBytes)
        let now = DispatchTime.now()
        if now.uptimeNanoseconds - self.lastReport.uptimeNanoseconds >= 100_000_000 {
            self.report(now: now)
        }
    }

    private func report(now: DispatchTime) {
        self.lastReport = now
        let step = self.unreported
        self.unreported = 0
        self.progress?(
            DownloadProgress(
                bytesWritten: step,
                totalBytesWritten: self.written,
                totalBytesExpectedToWrite: self.expected
            )
        )
    }

    func loadDidFinish() async {
        do {
            if self.handle == nil {
                // An empty 2xx body still produces the file.
                try self.openTemporary(for: self.response?.url)
            }
            guard let handle = self.handle, let temporary = self.temporaryURL else {
                throw URLError.tether(.cannotCreateFile, url: self.response?.url)
            }
            do {
                try handle.synchronize()
                try handle.close()
            } catch {
                throw URLError.tether(.cannotWriteToFile, url: self.response?.url, underlying: error)
            }
            self.handle = nil
            if rename(temporary.path, self.destination.path) != 0 {
                let code = errno
                throw URLError.tether(
                    .cannotWriteToFile,
                    url: self.response?.url,
                    underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO),
                    message: "cannot move the download to \(self.destination.path)"
                )
            }
            self.temporaryURL = nil
            self.report(now: .now())
            self.completion(LoadOutcome(response: self.response, data: nil, error: nil, metrics: self.metrics))
        } catch {
            self.removeTemporary()
            self.completion(LoadOutcome(response: self.response, data: nil, error: error, metrics: self.metrics))
        }
    }

    func loadDidFail(_ error: URLError) async {
        self.removeTemporary()
        self.completion(LoadOutcome(response: self.response, data: nil, error: error, metrics: self.metrics))
    }

    func loadDidStopSilently() {
        self.removeTemporary()
        self.completion(LoadOutcome(response: nil, data: nil, error: URLError.tether(.cancelled, url: nil)))
    }

    private func removeTemporary() {
        try? self.handle?.close()
        self.handle = nil
        if let temporary = self.temporaryURL {
            try? FileManager.default.removeItem(at: temporary)
            self.temporaryURL = nil
        }
    }
}
