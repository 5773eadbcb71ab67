public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The delegate of a ``URLConnectionDownload``, in the spirit of `NSURLConnectionDownloadDelegate`: progress, a
/// resumption, the finished file or the failure with its resume data.
///
/// The download calls it on its `OperationQueue`, one call at a time, in order.
public protocol URLConnectionDownloadDelegate: AnyObject {
    /// Tells the delegate that a resumption was accepted: the server sends the rest of the body from `offset`.
    ///
    /// - Parameters:
    ///   - download: The download.
    ///   - offset: The bytes already in the partial file.
    ///   - expectedTotalBytes: The whole body's length, or nil when unknown.
    func download(_ download: URLConnectionDownload, didResumeAtOffset offset: Int64, expectedTotalBytes: Int64?)

    /// Tells the delegate that bytes were written: for the first bytes, then at most every 100 ms, and at the end.
    ///
    /// - Parameters:
    ///   - download: The download.
    ///   - bytesWritten: Bytes written since the last call.
    ///   - totalBytesWritten: Bytes in the file, those of a resumed partial file included.
    ///   - expectedTotalBytes: The whole body's length, or nil when unknown.
    func download(
        _ download: URLConnectionDownload,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        expectedTotalBytes: Int64?
    )

    /// Tells the delegate that the whole body is at `destination`. The last message it receives.
    ///
    /// - Parameters:
    ///   - download: The download.
    ///   - destination: The destination file.
    ///   - response: The final response (`206` when a partial file was continued).
    func download(_ download: URLConnectionDownload, didFinishDownloadingTo destination: URL, response: HTTPURLResponse)

    /// Tells the delegate that the download failed. The last message it receives.
    ///
    /// - Parameters:
    ///   - download: The download.
    ///   - error: The failure; its ``Foundation/URLError/downloadResumeData`` continues the download when it can be
    ///     resumed, else ``Foundation/URLError/downloadNotResumableReason`` says why not.
    func download(_ download: URLConnectionDownload, didFailWithError error: URLError)
}

extension URLConnectionDownloadDelegate {
    /// Does nothing.
    public func download(_ download: URLConnectionDownload, didResumeAtOffset offset: Int64, expectedTotalBytes: Int64?)
    {}

    /// Does nothing.
    public func download(
        _ download: URLConnectionDownload,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        expectedTotalBytes: Int64?
    ) {}
}
