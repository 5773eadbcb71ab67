public import Foundation
import TetherConcurrency

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A download to a file with a delegate: the delegate face of
/// ``URLConnection/download(_:to:resumingWith:configuration:progress:)``, with the same file handling and resume
/// rules.
///
/// ```swift
/// let download = URLConnectionDownload(request: request, to: file, resumingWith: saved, delegate: self, queue: queue)
/// download.start()
/// // later: download.cancel { resumeData in saved = resumeData }
/// ```
public final class URLConnectionDownload: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var isStarted = false
        /// Set by a cancel: no delegate call begins after it.
        var isCancelled = false
        /// Who receives the resume data of a cancelled download, on the queue.
        var onCancel: (@Sendable (DownloadResumeData?) -> Void)?
    }

    /// The request.
    public let request: URLRequest
    /// The file the finished body replaces.
    public let destination: URL
    private let resumeData: DownloadResumeData?
    private let configuration: URLConnection.Configuration
    // Sendable: the delegate and the queue are only used on the queue, one delivery at a time (`deliveries` orders
    // them); the queue's `addOperations` is thread-safe.
    private let delegate: UncheckedSendableBox<any URLConnectionDownloadDelegate>
    private let queue: UncheckedSendableBox<OperationQueue>
    private let deliveries = DispatchQueue(label: "tether.http.download.delivery")
    private let state = LockedBox(State())

    /// A download of `request` to `destination`, continuing `resumeData` when given; call ``start()``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - destination: The file to create or replace.
    ///   - resumeData: From ``Foundation/URLError/downloadResumeData``, or nil to download from the start.
    ///   - configuration: The engine settings.
    ///   - delegate: Receives progress and the end (the download holds it strongly).
    ///   - queue: Where the delegate is called, one call at a time.
    public init(
        request: URLRequest,
        to destination: URL,
        resumingWith resumeData: DownloadResumeData? = nil,
        configuration: URLConnection.Configuration = .default,
        delegate: any URLConnectionDownloadDelegate,
        queue: OperationQueue
    ) {
        self.request = request
        self.destination = destination
        self.resumeData = resumeData
        self.configuration = configuration
        self.delegate = UncheckedSendableBox(delegate)
        self.queue = UncheckedSendableBox(queue)
    }

    /// Starts the download; does nothing when it started or was cancelled already.
    public func start() {
        let shouldStart = self.state.withLock { state -> Bool in
            guard !state.isStarted, !state.isCancelled else { return false }
            state.isStarted = true
            return true
        }
        guard shouldStart else { return }
        let task = Task { await self.run() }
        let isCancelled = self.state.withLock { state -> Bool in
            state.task = task
            return state.isCancelled
        }
        if isCancelled { task.cancel() }
    }

    /// Cancels the download: no delegate call begins after this returns, and its partial file is removed.
    public func cancel() {
        self.cancel(producingResumeData: nil)
    }

    /// Cancels the download and hands its resume data (nil when it cannot be resumed) to `completion`, on the
    /// queue; no delegate call begins after this returns.
    ///
    /// - Parameter completion: Receives the resume data, which keeps the partial file.
    public func cancel(byProducingResumeData completion: @escaping @Sendable (DownloadResumeData?) -> Void) {
        self.cancel(producingResumeData: completion)
    }

    private func cancel(producingResumeData completion: (@Sendable (DownloadResumeData?) -> Void)?) {
        let (wasCancelled, isStarted, task) = self.state.withLock { state in
            defer {
                if !state.isCancelled { state.onCancel = completion }
                state.isCancelled = true
            }
            return (state.isCancelled, state.isStarted, state.task)
        }
        guard !wasCancelled else { return }
        if isStarted {
            // The task, started now or about to be, ends with the resume data.
            task?.cancel()
        } else if let completion {
            self.deliver(evenIfCancelled: true) { _ in completion(self.resumeData) }
        }
    }

    private func run() async {
        do {
            let (response, _) = try await URLConnection.download(
                self.request,
                to: self.destination,
                resumeData: self.resumeData,
                self.configuration,
                metrics: false,
                { progress in
                    self.deliver {
                        $0.download(
                            self,
                            didWriteData: progress.bytesWritten,
                            totalBytesWritten: progress.totalBytesWritten,
                            expectedTotalBytes: progress.totalBytesExpectedToWrite
                        )
                    }
                },
                onResume: { offset, expected in
                    self.deliver { $0.download(self, didResumeAtOffset: offset, expectedTotalBytes: expected) }
                }
            )
            self.deliver { $0.download(self, didFinishDownloadingTo: self.destination, response: response) }
        } catch {
            let failure = error as? URLError ?? URLError.tether(.unknown, url: self.request.url, underlying: error)
            let (isCancelled, onCancel) = self.state.withLock { ($0.isCancelled, $0.onCancel) }
            if isCancelled {
                if let onCancel {
                    self.deliver(evenIfCancelled: true) { _ in onCancel(failure.downloadResumeData) }
                } else if let partial = failure.downloadResumeData?.partialFile {
                    // Nobody can resume it.
                    try? FileManager.default.removeItem(at: partial)
                }
                return
            }
            self.deliver { $0.download(self, didFailWithError: failure) }
        }
    }

    /// Runs `call` with the delegate on the queue, after the previous call returned; skipped once cancelled.
    private func deliver(
        evenIfCancelled: Bool = false,
        _ call: @escaping (any URLConnectionDownloadDelegate) -> Void
    ) {
        // Sendable: `call` runs once, on the queue, after this function returned.
        let boxedCall = UncheckedSendableBox(call)
        self.deliveries.async {
            let operation = BlockOperation {
                guard evenIfCancelled || !self.state.withLock({ $0.isCancelled }) else { return }
                boxedCall.value(self.delegate.value)
            }
            self.queue.value.addOperations([operation], waitUntilFinished: true)
        }
    }
}
