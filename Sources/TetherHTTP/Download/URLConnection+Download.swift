public import Foundation
import Logging

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension URLConnection {
    /// Downloads `request` to `destination`: streams into a hidden file next to it, then atomically replaces
    /// `destination`. No body size limit.
    ///
    /// A cancelled or failed download whose response had a strong `ETag` or a `Last-Modified` keeps its partial file
    /// and throws a `URLError` whose ``Foundation/URLError/downloadResumeData`` continues it
    /// (``download(_:to:resumingWith:configuration:progress:)``); otherwise nothing is left behind and
    /// ``Foundation/URLError/downloadNotResumableReason`` says why.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - destination: The file to create or replace.
    ///   - configuration: The engine settings.
    ///   - progress: Called serially at most every 100 ms, plus once at the end.
    /// - Returns: The final response (2xx).
    /// - Throws: `URLError`; a non-2xx status throws `.badServerResponse`; `.cannotCreateFile` /
    ///   `.cannotWriteToFile` for the file. On failure `destination` is untouched.
    public static func download(
        _ request: URLRequest,
        to destination: URL,
        configuration: Configuration = .default,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> HTTPURLResponse {
        try await self.download(request, to: destination, resumeData: nil, configuration, metrics: false, progress).0
    }

    /// Continues a download that was cancelled or failed, from its resume data.
    ///
    /// Asks for the rest of the body (`Range: bytes=N-`, `N` the partial file's length) only if the resource is
    /// still the version the resume data names (`If-Range`). A `206` whose `Content-Range` starts at `N` and agrees
    /// with the length known before is appended to the partial file; a `200` (the resource changed, or the server
    /// does not do ranges) replaces it with the whole body; a `416`, a `206` that does not fit or names another
    /// version discards the partial file and the whole resource is asked for again, once. A missing or empty partial
    /// file downloads the whole resource. The finished file is renamed onto `destination`, as a download's is.
    ///
    /// - Parameters:
    ///   - request: The request (its URL must be the resume data's; its headers go with the resumption).
    ///   - destination: The file to create or replace.
    ///   - resumeData: From ``Foundation/URLError/downloadResumeData``, or nil to download from the start.
    ///   - configuration: The engine settings.
    ///   - progress: Called serially at most every 100 ms, plus once at the end; its totals count the bytes resumed.
    /// - Returns: The final response: `206` when the partial file was continued, else the whole body's 2xx.
    /// - Throws: As ``download(_:to:configuration:progress:)``, with resume data again when the resumption fails;
    ///   `URLError(.badURL)` when the resume data is for another URL.
    public static func download(
        _ request: URLRequest,
        to destination: URL,
        resumingWith resumeData: DownloadResumeData?,
        configuration: Configuration = .default,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> HTTPURLResponse {
        try await self.download(
            request,
            to: destination,
            resumeData: resumeData,
            configuration,
            metrics: false,
            progress
        )
        .0
    }

    /// Downloads `request` to `destination` as ``download(_:to:configuration:progress:)`` does, and returns the
    /// load's metrics too.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - destination: The file to create or replace.
    ///   - configuration: The engine settings.
    ///   - progress: Called serially at most every 100 ms, plus once at the end.
    /// - Returns: The final response (2xx) and the load's ``URLConnectionMetrics``.
    /// - Throws: As ``download(_:to:configuration:progress:)``.
    public static func downloadAndMetrics(
        _ request: URLRequest,
        to destination: URL,
        configuration: Configuration = .default,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> (HTTPURLResponse, URLConnectionMetrics) {
        let (response, metrics) = try await self.download(
            request,
            to: destination,
            resumeData: nil,
            configuration,
            metrics: true,
            progress
        )
        guard let metrics else { throw URLError.tether(.badServerResponse, url: request.url) }
        return (response, metrics)
    }

    static func download(
        _ request: URLRequest,
        to destination: URL,
        resumeData: DownloadResumeData?,
        _ configuration: Configuration,
        metrics: Bool,
        _ progress: (@Sendable (DownloadProgress) -> Void)?,
        onResume: (@Sendable (_ offset: Int64, _ expectedLength: Int64?) -> Void)? = nil
    ) async throws -> (HTTPURLResponse, URLConnectionMetrics?) {
        var resumption = try resumeData.flatMap { try Self.resumption(from: $0, for: request) }
        while true {
            let promise = OutcomePromise()
            let observer = DownloadObserver(
                destination: destination,
                requestURL: request.url,
                resumption: resumption,
                progress: progress,
                onResume: onResume,
                collectsMetrics: metrics
            ) { promise.fulfil($0) }
            let load = HTTPLoad(
                request: Self.outgoing(request, resuming: resumption?.attempt),
                configuration: configuration,
                observer: observer
            )
            let outcome = await withTaskCancellationHandler {
                load.start()
                return await promise.value()
            } onCancel: {
                load.cancel(.cancelled)
            }
            if outcome.error != nil, resumption != nil, let reason = observer.restartReason, !Task.isCancelled {
                // The partial file is gone; the whole resource, once.
                configuration.logger?.debug(
                    "download restarts",
                    metadata: [
                        "url": "\(request.url.map { Redaction.url($0.absoluteString) } ?? "-")", "why": "\(reason)",
                    ]
                )
                resumption = nil
                continue
            }
            if let error = outcome.error { throw error }
            guard let response = outcome.response as? HTTPURLResponse else {
                throw URLError.tether(.badServerResponse, url: request.url)
            }
            return (response, outcome.metrics)
        }
    }

    /// The resumption `resumeData` asks for, nil when its partial file is missing or empty (the whole resource).
    /// - Throws: `URLError(.badURL)` when the resume data is for another URL than `request`'s.
    static func resumption(
        from resumeData: DownloadResumeData,
        for request: URLRequest
    ) throws -> DownloadObserver.Resumption? {
        guard let url = request.url, url.absoluteString == resumeData.url.absoluteString else {
            throw URLError.tether(
                .badURL,
                url: request.url,
                message: "the resume data is for \(Redaction.url(resumeData.url.absoluteString)), not this URL"
            )
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: resumeData.partialFile.path)
        // The partial file only ever grows with bytes of the version the validator names: its length is the offset.
        guard let size = (attributes?[.size] as? NSNumber)?.int64Value, size > 0 else { return nil }
        return DownloadObserver.Resumption(
            attempt: DownloadResumeRules.Attempt(
                offset: size,
                validator: resumeData.validator,
                expectedLength: resumeData.expectedLength
            ),
            resumeData: resumeData
        )
    }

    /// `request` asking for the rest of the body from the attempt's offset, if the resource did not change.
    static func outgoing(_ request: URLRequest, resuming attempt: DownloadResumeRules.Attempt?) -> URLRequest {
        guard let attempt else { return request }
        var outgoing = request
        outgoing.setValue("bytes=\(attempt.offset)-", forHTTPHeaderField: "Range")
        outgoing.setValue(attempt.validator.ifRangeValue, forHTTPHeaderField: "If-Range")
        // Ranges count the bytes as sent: the partial file holds an unencoded body.
        outgoing.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        // A stored whole response would answer the range with another body than the server's.
        outgoing.cachePolicy = .reloadIgnoringLocalCacheData
        return outgoing
    }
}
