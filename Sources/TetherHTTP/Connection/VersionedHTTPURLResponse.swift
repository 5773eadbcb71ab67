#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// An `HTTPURLResponse` that remembers its protocol version: Foundation's own drops the `httpVersion` given to its
/// initialiser on Linux and has no public accessor for it on Apple platforms. Every response `URLConnection` makes is
/// one; read the version through ``Foundation/HTTPURLResponse/httpVersion``.
// Sendable: `version` is immutable after init, and the superclass is immutable too.
final class VersionedHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
    let version: String

    init?(url: URL, statusCode: Int, version: String, headerFields: [String: String]?) {
        self.version = version
        super.init(url: url, statusCode: statusCode, httpVersion: version, headerFields: headerFields)
    }

    required init?(coder: NSCoder) {
        self.version = "HTTP/1.1"
        super.init(coder: coder)
    }

    /// `HTTP/<major>.<minor>` as HTTP/1 writes it, and `HTTP/2`, `HTTP/3` for the later versions.
    static func versionString(major: Int, minor: Int) -> String {
        major >= 2 && minor == 0 ? "HTTP/\(major)" : "HTTP/\(major).\(minor)"
    }
}

extension HTTPURLResponse {
    /// The protocol version the response arrived with (`"HTTP/1.1"`, `"HTTP/1.0"`, `"HTTP/2"`), for responses that
    /// `URLConnection` delivers, live or from its cache; nil for responses made elsewhere.
    public var httpVersion: String? { (self as? VersionedHTTPURLResponse)?.version }
}
