import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams a load's body into a hidden file next to the destination (or onto a resumption's partial file), then
/// renames it into place. A cancelled or failed download keeps that file when it can be resumed, and its error
/// carries the resume data.
// Sendable: its mutable state (file handle, counters) is touched only from the load's task, one event at a time; the
// download reads ``restartReason`` after the completion, which happens after every write.
final class DownloadObserver: LoadObserver, @unchecked Sendable {
    /// A resumption: the rest of the partial file's body, if the resource did not change.
    struct Resumption: Sendable {
        var attempt: DownloadResumeRules.Attempt
        var resumeData: DownloadResumeData
    }

    private let destination: URL
    private let requestURL: URL?
    private let resumption: Resumption?
    private let progress: (@Sendable (DownloadProgress) -> Void)?
    private let onResume: (@Sendable (_ offset: Int64, _ expectedLength: Int64?) -> Void)?
    private let completion: @Sendable (LoadOutcome) -> Void
    private var response: HTTPURLResponse?
    private var fileURL: URL?
    private var handle: FileHandle?
    private var written: Int64 = 0
    private var expected: Int64?
    private var validator: DownloadResumeData.Validator?
    private var notResumableReason: String?
    /// When progress was last reported: the first chunk is reported at once, later ones at most every 100 ms.
    private var lastReport: DispatchTime?
    private var unreported: Int64 = 0
    private var metrics: URLConnectionMetrics?
    /// Set when the response showed that the partial file cannot be continued: it is gone, and the download asks for
    /// the whole resource again.
    private(set) var restartReason: String?
    let collectsMetrics: Bool

    init(
        destination: URL,
        requestURL: URL?,
        resumption: Resumption? = nil,
        progress: (@Sendable (DownloadProgress) -> Void)?,
        onResume: (@Sendable (_ offset: Int64, _ expectedLength: Int64?) -> Void)? = nil,
        collectsMetrics: Bool = false,
        completion: @escaping @Sendable (LoadOutcome) -> Void
    ) {
        self.destination = destination
        self.requestURL = requestURL
        self.resumption = resumption
        self.progress = progress
        self.onResume = onResume
        self.collectsMetrics = collectsMetrics
        self.completion = completion
    }

    func loadDidCollect(_ metrics: URLConnectionMetrics) {
        self.metrics = metrics
    }

    func loadDidReceive(_ response: HTTPURLResponse) async throws {
        var headers: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { headers[name] = value }
        self.response = response
        let decision = DownloadResumeRules.decide(
            status: response.statusCode,
            headers: headers,
            attempt: self.resumption?.attempt
        )
        switch decision {
        case .reject(let status):
            throw URLError.tether(.badServerResponse, url: response.url, message: "the server answered HTTP \(status)")
        case .restart(let reason):
            self.restartReason = reason
            if let partial = self.resumption?.resumeData.partialFile {
                try? FileManager.default.removeItem(at: partial)
            }
            throw URLError.tether(.badServerResponse, url: response.url, message: "cannot resume: \(reason)")
        case .writeFromStart(let expected):
            (self.validator, self.notResumableReason) = DownloadResumeRules.validator(in: headers)
            // A whole body never lands on a partial file of another version: that file goes.
            if let partial = self.resumption?.resumeData.partialFile {
                try? FileManager.default.removeItem(at: partial)
            }
            try self.openTemporary(for: response.url)
            self.expected = expected
        case .append(let offset, let expected):
            guard let resumption = self.resumption else { return }
            self.validator = resumption.attempt.validator
            try self.openPartial(resumption.resumeData.partialFile, at: offset, for: response.url)
            self.expected = expected
            self.onResume?(offset, expected)
        }
    }

    private func openTemporary(for url: URL?) throws {
        self.removeFile()
        let directory = self.destination.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(self.destination.lastPathComponent).tether-\(UUID().uuidString).download"
        )
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary.path)
        else {
            throw URLError.tether(.cannotCreateFile, url: url, message: "cannot create \(temporary.path)")
        }
        self.fileURL = temporary
        self.handle = handle
        self.written = 0
    }

    /// Opens the partial file for appending after its first `offset` bytes (anything past them goes).
    private func openPartial(_ partial: URL, at offset: Int64, for url: URL?) throws {
        guard let handle = FileHandle(forWritingAtPath: partial.path) else {
            throw URLError.tether(.cannotWriteToFile, url: url, message: "cannot open \(partial.path)")
        }
        do {
            try handle.truncate(atOffset: UInt64(offset))
            _ = try handle.seekToEnd()
        } catch {
            try? handle.close()
            throw URLError.tether(.cannotWriteToFile, url: url, underlying: error)
        }
        self.fileURL = partial
        self.handle = handle
        self.written = offset
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
        if let last = self.lastReport, now.uptimeNanoseconds - last.uptimeNanoseconds < 100_000_000 { return }
        self.report(now: now)
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
            guard let handle = self.handle, let file = self.fileURL else {
                throw URLError.tether(.cannotCreateFile, url: self.response?.url)
            }
            if let expected = self.expected, expected != self.written {
                // A body that ended early without the engine noticing (no Content-Length) is not the resource.
                let message = "the body ended after \(self.written) of \(expected) bytes"
                await self.loadDidFail(
                    URLError.tether(.networkConnectionLost, url: self.response?.url, message: message)
                )
                return
            }
            do {
                try handle.synchronize()
                try handle.close()
            } catch {
                throw URLError.tether(.cannotWriteToFile, url: self.response?.url, underlying: error)
            }
            self.handle = nil
            if rename(file.path, self.destination.path) != 0 {
                let code = errno
                throw URLError.tether(
                    .cannotWriteToFile,
                    url: self.response?.url,
                    underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO),
                    message: "cannot move the download to \(self.destination.path)"
                )
            }
            self.fileURL = nil
            self.report(now: .now())
            self.completion(LoadOutcome(response: self.response, data: nil, error: nil, metrics: self.metrics))
        } catch {
            self.removeFile()
            self.completion(LoadOutcome(response: self.response, data: nil, error: error, metrics: self.metrics))
        }
    }

    func loadDidFail(_ error: URLError) async {
        let (resumeData, reason) = self.resumeDataAfterFailure()
        if resumeData == nil {
            self.removeFile()
        } else {
            try? self.handle?.close()
            self.handle = nil
        }
        let failure = error.addingDownload(resumeData: resumeData, notResumableReason: reason)
        self.completion(LoadOutcome(response: self.response, data: nil, error: failure, metrics: self.metrics))
    }

    /// What a failure leaves to resume from: the file being written when it has a validator and bytes; a
    /// resumption's partial file as it was when no response was written to it; else nothing, and why.
    private func resumeDataAfterFailure() -> (DownloadResumeData?, String?) {
        if let reason = self.restartReason { return (nil, reason) }
        if let file = self.fileURL {
            guard let validator = self.validator, let url = self.requestURL else {
                return (nil, self.notResumableReason ?? "the response has no strong ETag and no Last-Modified")
            }
            guard self.written > 0 else { return (nil, "no byte of the body arrived") }
            return (
                DownloadResumeData(
                    url: url,
                    validator: validator,
                    bytesReceived: self.written,
                    expectedLength: self.expected,
                    partialFile: file
                ),
                nil
            )
        }
        if let resumption = self.resumption {
            var untouched = resumption.resumeData
            untouched.bytesReceived = resumption.attempt.offset
            return (untouched, nil)
        }
        return (nil, "no byte of the body arrived")
    }

    func loadDidStopSilently() {
        self.removeFile()
        self.completion(LoadOutcome(response: nil, data: nil, error: URLError.tether(.cancelled, url: nil)))
    }

    private func removeFile() {
        try? self.handle?.close()
        self.handle = nil
        if let file = self.fileURL {
            try? FileManager.default.removeItem(at: file)
            self.fileURL = nil
        }
    }
}
