public import Foundation

/// What a cancelled or failed download needs to continue where it stopped: the resource, the validator that names
/// the version whose bytes the partial file holds, the bytes received and the partial file.
///
/// A value, `Codable`, to store anywhere (`tether get --continue` keeps it as JSON beside the destination, in
/// `FILE.tether-resume`) and hand back to ``URLConnection/download(_:to:resumingWith:configuration:progress:)``. A
/// failed download's `URLError` carries it in ``Foundation/URLError/downloadResumeData``.
///
/// Resuming asks for the rest (`Range: bytes=N-`) only if the resource is still the same version
/// (`If-Range: <validator>`), where `N` is the partial file's length: the download only ever grows that file with
/// bytes of the response its validator names.
public struct DownloadResumeData: Codable, Sendable, Hashable {
    /// What names the version of the resource whose bytes the partial file holds.
    public enum Validator: Codable, Sendable, Hashable {
        /// A strong entity tag, quotes included (`"v1"`; a weak `W/"v1"` never resumes).
        case entityTag(String)
        /// The `Last-Modified` date as the server wrote it, used when there is no strong entity tag.
        case lastModified(String)

        /// The `If-Range` value: the entity tag or the date, as received.
        public var ifRangeValue: String {
            switch self {
            case .entityTag(let tag): tag
            case .lastModified(let date): date
            }
        }
    }

    /// The URL of the request that was downloading.
    public var url: URL
    /// The version the partial file holds.
    public var validator: Validator
    /// The bytes of the body in the partial file when the resume data was made.
    public var bytesReceived: Int64
    /// The body's whole length, when the server said it (`Content-Length`, or a `Content-Range` total).
    public var expectedLength: Int64?
    /// The partial file (a hidden file beside the destination).
    public var partialFile: URL

    /// Resume data from its parts.
    ///
    /// - Parameters:
    ///   - url: The URL of the request that was downloading.
    ///   - validator: The version the partial file holds.
    ///   - bytesReceived: The bytes in the partial file.
    ///   - expectedLength: The whole body's length, or nil.
    ///   - partialFile: The partial file.
    public init(url: URL, validator: Validator, bytesReceived: Int64, expectedLength: Int64?, partialFile: URL) {
        self.url = url
        self.validator = validator
        self.bytesReceived = bytesReceived
        self.expectedLength = expectedLength
        self.partialFile = partialFile
    }

    /// The `userInfo` key under which a download's `URLError` carries its resume data.
    public static let userInfoKey = "TetherDownloadResumeData"
    /// The `userInfo` key under which a failed download's `URLError` says why it cannot be resumed.
    public static let notResumableReasonKey = "TetherDownloadNotResumableReason"
}
