/// Progress of ``URLConnection/download(_:to:configuration:progress:)``.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes written in this step.
    public var bytesWritten: Int64
    /// Bytes written so far.
    public var totalBytesWritten: Int64
    /// The expected length, nil when unknown (no `Content-Length`, or a decoded body).
    public var totalBytesExpectedToWrite: Int64?

    /// Creates a progress value.
    ///
    /// - Parameters:
    ///   - bytesWritten: Bytes written in this step.
    ///   - totalBytesWritten: Bytes written so far.
    ///   - totalBytesExpectedToWrite: The expected length, or nil.
    public init(bytesWritten: Int64, totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?) {
        self.bytesWritten = bytesWritten
        self.totalBytesWritten = totalBytesWritten
        self.totalBytesExpectedToWrite = totalBytesExpectedToWrite
    }

    /// `totalBytesWritten / totalBytesExpectedToWrite` (at most 1), nil when the length is unknown.
    public var fractionCompleted: Double? {
        guard let expected = self.totalBytesExpectedToWrite, expected > 0 else { return nil }
        return min(1, Double(self.totalBytesWritten) / Double(expected))
    }
}
